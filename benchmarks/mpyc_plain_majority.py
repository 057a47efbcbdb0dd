"""The baseline of ``bench_mpc_vs_mpyc.py``: a plain MPyC program doing mpdp's secure majority round.

Run as ``python benchmarks/mpyc_plain_majority.py -M m -I i -T t -B base_port --no-log TABLE ROUNDS``
(m processes, MPyC's own options first). TABLE is a JSON file ``{"bits": [k ints], "random_bits": L,
"scaled": [N(0..k)]}``. Per round, as :func:`mpdp.parties.mpc.server.round_server` does for ``majority``:
party 0 secret-shares the k bits (``mpc.input``), s = their sum, e_s = ``unit_vector(s, k + 1)``,
N(s) = <e_s, N>, u from L secret random bits, output u < N(s). The same field and SecInt as mpdp's servers.
Party 0 prints one JSON line ``{"seconds": [per round], "cpu": [its CPU s per round], "released": [bits]}`` (a warm-up round first, untimed).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from mpyc.runtime import mpc  # parses and strips MPyC's own options from sys.argv

from mpdp.parties.mpc.sharing import SECURE_INTEGER_BITS, field_modulus


async def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    rounds = int(sys.argv[2])
    secint = mpc.SecInt(SECURE_INTEGER_BITS, p=field_modulus())
    k, bits, table = len(spec["bits"]), spec["random_bits"], spec["scaled"]
    await mpc.start()
    seconds, cpu, released = [], [], []
    for r in range(rounds + 1):
        await mpc.barrier()
        begin, clock = time.perf_counter(), time.process_time()
        votes = mpc.input([secint(b) for b in spec["bits"]] if mpc.pid == 0 else [secint(None)] * k, senders=0)
        count = mpc.sum(votes)
        unit = mpc.unit_vector(count, k + 1)
        scaled = mpc.sum([e * n for e, n in zip(unit, table)])
        u = mpc.sum([b * (1 << j) for j, b in enumerate(mpc.random_bits(secint, bits))])
        released.append(int(await mpc.output(u < scaled)))
        if r:
            seconds.append(time.perf_counter() - begin)
            cpu.append(time.process_time() - clock)
    await mpc.shutdown()
    if mpc.pid == 0:
        print(json.dumps({"seconds": seconds, "cpu": cpu, "released": released}), flush=True)


if __name__ == "__main__":
    mpc.run(main())
