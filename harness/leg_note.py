"""Say when an enabled leg of Mem++ placed no row among any question's hits (it matched nothing, as the
conjunctive lexical leg on OrgMemBench, or only rows fused below the top k): an ablation dropping it
prints the same table.
"""

from __future__ import annotations

from typing import Any


def enabled_legs(params: dict[str, Any]) -> list[str]:
    """Mem++'s legs that take part in fusion (listed and weighted above 0), in config order."""
    weights = params.get("weights") or {}
    return [leg for leg in params.get("legs") or [] if float(weights.get(leg, 1.0)) > 0]


def silent_legs(records: list[dict[str, Any]], legs: list[str]) -> list[str]:
    """The legs of ``legs`` that no hit of any record holds a rank in (empty when no records)."""
    if not records:
        return []
    seen: set[str] = set()
    for record in records:
        for hit in record.get("hits") or []:
            seen.update((hit.get("leg_ranks") or {}).keys())
    return [leg for leg in legs if leg not in seen]


def silent_legs_note(records: list[dict[str, Any]], params: dict[str, Any]) -> str | None:
    """One console line naming the silent legs, or None (also for systems without legs)."""
    silent = silent_legs(records, enabled_legs(params))
    if not silent:
        return None
    names = " and ".join(f"the {leg} leg" for leg in silent)
    it = "it" if len(silent) == 1 else "each"
    return (
        f"note: {names} placed no row among the hits of any of the {len(records)} question(s) "
        f"({it} matched nothing, or only rows fused below the top k)"
    )
