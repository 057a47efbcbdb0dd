"""One reading layer for the text files a user hands to mpdp (datasets, per-party epsilon files, rosters,
``--config`` TOML): UTF-8, a byte order mark skipped (as spreadsheet programs write it), and a file that is
unreadable or not UTF-8 is one :class:`mpdp.protocols.errors.ParameterError` naming the option, the file and
the first bad byte, never a ``UnicodeDecodeError`` traceback."""

from __future__ import annotations

from pathlib import Path

from mpdp.protocols.errors import ParameterError

__all__ = ["read_text_file"]


def read_text_file(path: Path | str, option: str, what: str,
                   error: type[ParameterError] = ParameterError) -> str:
    """The text of ``path`` decoded as UTF-8, without a leading byte order mark.

    Args:
        option: the option that named the file (``--epsilon``, ``--dataset``, ``--config``), for the error.
        what: what the file should be, e.g. ``"CSV file"``.
        error: the :class:`ParameterError` subclass to raise (e.g. ``DatasetError``).

    Raises:
        ParameterError (``error``): the file cannot be read, or is not UTF-8 (names the offset and byte).
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise error(option, str(path), f"a readable {what}", hint=exc.strerror or str(exc)) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(option, str(path), f"a {what} in UTF-8",
                    hint=f"byte {exc.start} is 0x{raw[exc.start]:02x}, not UTF-8: save the file as UTF-8") from None
