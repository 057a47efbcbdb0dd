"""The options of one live run, once (issue 21): :class:`SimulationConfig`, the pydantic model that
``mpdp.simulate(config)`` / ``mpdp.simulate(dataset=..., **options)`` validate, that ``mpdp simulate`` builds
from its flags (and so from its ``--config`` TOML, which sets the flags), and whose recorded fields are the
``inputs`` of ``results.json`` / ``--json`` (:meth:`SimulationConfig.inputs`). A parameter is added here once:
a field (with its description), and the ``mpdp simulate`` flag of the same name.

A bad option is refused by the model itself, ``SimulationConfig(...)`` as much as ``mpdp.simulate(...)``, in
one line naming it, its value and what is allowed (a :class:`mpdp.protocols.errors.ParameterError`), never
pydantic's multi-line report: a misspelt keyword names the closest option (``epsilom=1 is not allowed: an
option of SimulationConfig (did you mean epsilon?)``), a value of the wrong type says which type, a value out
of its range says the range, and combinations (a seed with ``secure``, ``servers`` and ``threshold``, ...)
are checked too (:mod:`mpdp.parties.api.config_checks`). What needs the data or the machine (a CSV file, an
epsilon file's lines, the estimated time) is checked by the run, still before any process starts.
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import numpy as np
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from mpdp.broker.settings import BrokerSettings
from mpdp.parties.api.config_checks import FIELD_CHECKS, check_combinations
from mpdp.parties.api.keywords import unknown_option
from mpdp.parties.rounds.privacy import DEFAULT_DELTA_SLACK
from mpdp.parties.rounds.text_files import read_text_file
from mpdp.parties.session.sizing import SESSION_TIME_LIMIT
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction

__all__ = ["SimulationConfig"]


def _not_a_bool(value: Any) -> Any:
    """A bool, a text or a float is not a count (pydantic's lax mode would read ``True`` as 1, ``"10"`` as
    10, ``1e3`` as 1000: a float where a count is meant is refused, as the API's other integer keywords)."""
    if isinstance(value, bool | str | float | np.floating):
        kind = "true or false" if isinstance(value, bool) else "text" if isinstance(value, str) else (
            f"a float (write {int(value)})" if float(value).is_integer() else "a float")
        raise ValueError(f"an integer, not {kind}")
    return value


def _a_number(value: Any) -> Any:
    """A bool or a text is not a number (lax mode: ``True`` is 1.0, ``"0.5"`` is 0.5)."""
    if isinstance(value, bool | str):
        raise ValueError(f"a number, not {'true or false' if isinstance(value, bool) else 'text'}")
    return value


def _a_flag(value: Any) -> Any:
    """Only True or False switch a flag (lax mode: ``"yes"``, ``"off"``, 1 and 0 would)."""
    if not isinstance(value, bool):
        raise ValueError("true or false")
    return value


#: An integer option: a Python or numpy integer, never a bool, a text or a float.
Integer = Annotated[int, BeforeValidator(_not_a_bool)]
#: A number option: an integer or a float (Python or numpy), never a bool or a text.
Number = Annotated[float, BeforeValidator(_a_number)]
#: A flag: True or False, nothing read as one.
Flag = Annotated[bool, BeforeValidator(_a_flag)]


class SimulationConfig(BaseModel):
    """The options of one live run (``mpdp.simulate``, ``mpdp simulate``); every field has the default of both.

    Construct it with keywords (``SimulationConfig(parties=5, epsilon=0.5)``), from a mapping
    (:meth:`of`), from a TOML file (:meth:`from_toml`), and change it with :meth:`replace`; it is frozen. The
    fields are described below (units: epsilon in nats, times in seconds).

    Raises:
        ParameterError: on construction, the first bad option, in one line: an unknown one (the closest
            known name suggested, or the known ones listed), a value of the wrong type (the type allowed), out
            of its range (the range) or contradicting another option (which, and what is allowed).

    Example:
        >>> SimulationConfig(parties=5, epsilon="0.5:2").epsilon
        '0.5:2'
        >>> SimulationConfig(epsilon=-1)
        Traceback (most recent call last):
        ...
        mpdp.protocols.errors.ParameterError: epsilon=-1.0 is not allowed: a number >= 0 (inf allowed)
    """

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    #: The fields that say where and how a run happens rather than what it computes: not in ``inputs`` (a
    #: resumed run may not change the others; the input data are compared by their digest instead).
    NOT_RECORDED: ClassVar[frozenset[str]] = frozenset({
        "votes", "parties", "rounds", "label_column", "broker", "party_broker", "reconnect_window", "out", "force",
        "resume", "workers", "connections", "validators", "executor", "time_limit"})

    dataset: str | None = Field(None, description=(
        '"house-votes-84" (the default when no input is given) or a CSV path of 1/0 (y/n, ? = takes no part), '
        "one row per party, one column per round"))
    votes: Any = Field(None, description="instead, an int array (parties, rounds) of 1, 0 or -1 (takes no part)")
    parties: Integer | None = Field(None, description="instead, K parties with uniformly random bits")
    rounds: Integer | None = Field(None, description="with parties: R rounds of random bits (default 1)")
    label_column: Flag | None = Field(None, description="a CSV's first column is a label (None: detect)")
    epsilon: Number | str | list[Number] | tuple[Number, ...] = Field(1.0, description=(
        'each party\'s epsilon (nats): one value, "LO:HI" (uniform per party), a file of epsilon[,delta] lines, '
        "or one value per party"))
    delta: Number = Field(0.0, description="in [0, 1); > 0 selects the four-output randomized response")
    repetitions: Integer = Field(200, description="independent privatizations of each round (a simulation device)")
    function: str | BooleanFunction = Field("majority", description=(
        "majority (passed for the House), sum, xor, and, or, threshold:T"))
    rule: str = Field("average", description=(
        "the observer's average (002 eq. (4)) or worst-case (eq. (6)) optimal rule"))
    seed: Integer | None = Field(None, description="makes the run reproducible (None: OS entropy)")
    protocol: str = Field("rr", description=(
        "rr (randomized response, no one trusted), curator (a trusted curator releases the optimal central "
        "mechanism's output, 001) or mpc (the same release computed by compute servers, 000/001)"))
    servers: Integer = Field(3, description="protocol mpc: compute servers M")
    threshold: Integer = Field(1, description="protocol mpc: colluding servers tolerated, T < M/2")
    broker: str | BrokerSettings | None = Field(None, description=(
        "None ($MPDP_BROKER_URL, else our own), embedded, mosquitto, a URL (mqtt[s]://[USER:PASSWORD@]HOST:PORT, "
        "ws[s]://...), or BrokerSettings for TLS options"))
    party_broker: str | BrokerSettings | None = Field(None, description=(
        "None (the parties use broker), or mqtt://HOST[:PORT] of a running broker the parties attach to"))
    reconnect_window: Number | None = Field(None, description=(
        "seconds a client keeps reconnecting to a broker that went away (None: the settings' own, else "
        "max(60, round_timeout))"))
    out: str | Path | None = Field(None, description=(
        "the run's folder for transcripts.sqlite, results.json and accuracy.png (None: a new mpdp-run-XXXX under "
        "the temporary directory)"))
    force: Flag = Field(False, description="with out: replace an earlier run's files there")
    resume: Flag = Field(False, description="continue the run in folder out with the same inputs")
    workers: Integer | None = Field(None, description="worker processes (default: one per core)")
    connections: str = Field("auto", description=(
        "auto (the default: per-party while the parties' sockets fit the file-descriptor limit and set up within "
        "45 CPU-s, about 17,000 parties, else per-worker; the reason is printed before a large run and recorded, "
        "mpdp.parties.session.estimate.choose_connections), per-party (each party its own MQTT connection, as "
        "deployed) or per-worker (each worker process multiplexes its parties over one connection: fewer "
        "sockets and less memory for thousands of parties; each party still draws its own answer; without validators "
        "the answers go in bundles, each signed once by the worker under a key every party endorsed in its signed "
        "ready, the answers in it unsigned)"))
    validators: Integer = Field(0, description=(
        "processes that verify the parties' messages for the observer (0: the observer itself)"))
    executor: str | None = Field(None, description=(
        "None (the parties' workers are processes here) or dask://HOST:PORT: tasks on that Dask cluster, reaching "
        "broker (or party_broker) by its URL; the observer stays here"))
    secure: Flag = Field(False, description="deployment mode (the OS CSPRNG; no seed)")
    party_decisions: Flag = Field(False, description="the parties decide f too")
    alpha: Number = Field(0.05, description="family-wise level of the per-round consistency tests")
    round_timeout: Number | None = Field(None, description=(
        "seconds of quiet after the last new answer before a round closes (None: 60, or longer for a large run)"))
    budget: tuple[Number, Number] | str | None = Field(None, description=(
        'each party\'s (epsilon, delta) budget, or "EPS,DELTA"'))
    delta_slack: Number = Field(DEFAULT_DELTA_SLACK, description="delta_tilde of the optimal composition")
    time_limit: Number | None = Field(SESSION_TIME_LIMIT, description=(
        "seconds the session may take (None: no limit); a longer estimate is refused before any process starts"))

    if not TYPE_CHECKING:  # type checkers see pydantic's __init__ of the fields
        def __init__(self, /, **options: Any) -> None:
            try:
                super().__init__(**options)
            except ValidationError as exc:
                raise _parameter_error(exc, options, _CALLER.get()) from None

    @field_validator(*FIELD_CHECKS)
    @classmethod
    def _in_range(cls, value: Any, info: ValidationInfo) -> Any:
        assert info.field_name is not None
        return FIELD_CHECKS[info.field_name](value)

    @model_validator(mode="after")
    def _consistent(self) -> SimulationConfig:
        check_combinations(self)
        return self

    @classmethod
    def of(cls, config: SimulationConfig | None = None, options: Mapping[str, Any] | None = None,
           where: str = "mpdp.simulate") -> SimulationConfig:
        """``config`` (default: every default) with ``options`` (keyword -> value) changed, validated.

        Raises:
            ParameterError: the first bad option, as on construction; ``where`` names the caller for an
                unknown option.
        """
        given = dict(config if config is not None else {}) | dict(options or {})
        caller = _CALLER.set(where)
        try:
            return cls(**given)
        finally:
            _CALLER.reset(caller)

    @classmethod
    def from_toml(cls, path: Path | str, **options: Any) -> SimulationConfig:
        """The run of a TOML file as ``mpdp simulate --config FILE`` reads it, with ``options`` over it.

        Keys are the options' names with dashes or underscores (``delta-slack``); ``cafile``, ``cert``, ``key``
        and ``mqtt-version`` are ``broker``'s TLS settings
        (:meth:`mpdp.broker.settings.BrokerSettings.from_url`); ``json`` and ``quiet``, where the command
        line prints, are not the run's and are skipped.

        Raises:
            ParameterError: the file missing or not TOML (named, with the reason), an unknown key (the known
                ones listed), a value of the wrong type, bad broker settings.
        """
        import tomllib

        text = read_text_file(path, "config", "TOML file")
        try:
            table = {key.replace("-", "_"): value for key, value in tomllib.loads(text).items()}
        except tomllib.TOMLDecodeError as exc:
            raise ParameterError("config", str(path), f"a TOML file ({exc})") from None
        tls = {name: table.pop(key) for key, name in _TLS_KEYS.items() if key in table}
        for key in _COMMAND_LINE_KEYS:
            table.pop(key, None)
        given = table | options
        if tls and not isinstance(given.get("broker"), BrokerSettings):
            given["broker"] = BrokerSettings.from_url(given.get("broker"), **tls)
        return cls.of(None, given, f"a --config TOML ({path})")

    def replace(self, **options: Any) -> SimulationConfig:
        """A copy with ``options`` changed, validated (:meth:`of`)."""
        return SimulationConfig.of(self, options)

    def inputs(self, **resolved: Any) -> dict[str, Any]:
        """The ``inputs`` of the run's document: every field but :attr:`NOT_RECORDED`, as given, except the
        ``resolved`` values (e.g. the dataset's name, the round timeout the run chose), in field order."""
        return {name: resolved.get(name, getattr(self, name)) for name in type(self).model_fields
                if name not in self.NOT_RECORDED}


#: Who builds the model, for the error of an unknown option (:meth:`SimulationConfig.of` sets it).
_CALLER = contextvars.ContextVar("_CALLER", default="SimulationConfig")
#: TOML keys of ``mpdp simulate --config`` that are ``broker``'s TLS settings (key -> keyword of from_url).
_TLS_KEYS = {"cafile": "cafile", "cert": "cert", "key": "key", "mqtt_version": "protocol"}
#: TOML keys of ``mpdp simulate --config`` about the command line's output, not the run.
_COMMAND_LINE_KEYS = ("json", "quiet")


def _parameter_error(exc: ValidationError, given: Mapping[str, Any], where: str) -> ParameterError:
    """pydantic's report as one :class:`ParameterError` line: an unknown option first (the closest field
    suggested, else the fields listed, as an option of ``where``), else the first error: a check's own
    ParameterError (:mod:`mpdp.parties.api.config_checks`) as raised, a wrong type with the option, its value as
    ``given`` and what is allowed (the type pydantic wanted, or, for an option of several forms, the field's
    description of them)."""
    errors = exc.errors(include_url=False)
    unknown = [e for e in errors if e["type"] == "extra_forbidden"]
    if unknown:
        name = str(unknown[0]["loc"][0])
        return unknown_option(name, given.get(name), SimulationConfig.model_fields, where)
    raised = errors[0].get("ctx", {}).get("error")
    if isinstance(raised, ParameterError):
        return raised
    name = str(errors[0]["loc"][0]) if errors[0]["loc"] else "options"
    wanted = sorted({str(e["msg"]).removeprefix("Input should be ").removeprefix("Value error, ")
                     for e in errors if e["loc"][:1] == errors[0]["loc"][:1]})
    field = SimulationConfig.model_fields.get(name)
    allowed = wanted[0] if len(wanted) == 1 or field is None or not field.description else field.description
    return ParameterError(name, given.get(name), allowed)
