"""The upstream evaluation files the paper's protocol uses, pinned by commit and sha256.

The wording of the judges and of OrgMemBench's answerer is read from these files at run time; it is
never copied into this repository. ``scripts/fetch_official.py`` downloads them from GitHub at the
pinned commits (for users with internet); offline, any directory laid out as
``<folder>/<path in the upstream repository>`` serves (e.g. ``../shared/official``).
The hashes are those of the files at the pinned commits, as listed in that folder's SOURCE.md.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GITHUB_RAW", "MIRROR_ENV", "OFFICIAL_FILES", "OfficialFile", "Upstream", "UPSTREAMS", "official_file"]

GITHUB_RAW = "https://raw.githubusercontent.com"
MIRROR_ENV = "MEMPP_OFFICIAL_MIRROR"  # a server with GitHub raw's <owner>/<repo>/<commit>/<path> layout


@dataclass(frozen=True)
class Upstream:
    """One upstream repository at one commit; ``folder`` is its directory in an official dir."""

    folder: str
    repo: str
    commit: str
    licence: str


@dataclass(frozen=True)
class OfficialFile:
    """One pinned file: ``path`` inside its upstream repository."""

    upstream: Upstream
    path: str
    sha256: str

    @property
    def local(self) -> str:
        """Where it sits under an official directory."""
        return f"{self.upstream.folder}/{self.path}"

    def url(self, base: str = GITHUB_RAW) -> str:
        return f"{base.rstrip('/')}/{self.upstream.repo}/{self.upstream.commit}/{self.path}"

    @property
    def cite(self) -> str:
        """``owner/repo@commit12:path``, as the harness names the source it used."""
        return f"{self.upstream.repo}@{self.upstream.commit[:12]}:{self.path}"


LONGMEMEVAL = Upstream("longmemeval", "xiaowu0162/LongMemEval", "9e0b455f4ef0e2ab8f2e582289761153549043fc", "MIT")
# mem0 removed evaluation/ in 9315e3036; this is its parent.
MEM0 = Upstream("mem0", "mem0ai/mem0", "b3ede5b7c0ac0e847b03786a603c107ac943b3ee", "Apache-2.0")
ORGMEMBENCH = Upstream("orgmembench", "PandelisZ/OrgMemBench", "4d6fb64b8c0a7111fbdf00a5d3c5705872343606", "MIT")
UPSTREAMS = (LONGMEMEVAL, MEM0, ORGMEMBENCH)

_PINS: tuple[tuple[Upstream, str, str], ...] = (
    (LONGMEMEVAL, "LICENSE", "d3c4b9aa54759df6ded337978a6f3b55b75615e5e4525c3b82d7e2627d4b9732"),
    (LONGMEMEVAL, "src/evaluation/evaluate_qa.py", "ecce9c4c79dc89d99534ac17b383a5cbb5b9f0c69ee98adaf0684742e3d95251"),
    (LONGMEMEVAL, "src/evaluation/print_qa_metrics.py", "e9283933a0cefb7a0ded7365e436ae3d1be5aac41853325e6155d83bf07607f0"),
    (LONGMEMEVAL, "src/retrieval/eval_utils.py", "c98b8d1096877a15aa755c9de44fe33c195298466a2eb6f3c0f9f6bde8c72349"),
    (MEM0, "LICENSE", "0bbcbe931c353293a2fafce08326181dfeea0e568c566afd4ce8337a70f5e219"),
    (MEM0, "evaluation/README.md", "ed37a3a052a8eec469a5ed78aa251719dfc2a2fcd8e286ffb65c04fc952f92c9"),
    (MEM0, "evaluation/metrics/llm_judge.py", "ac2e242f6ea0b817ba1b229ff9e5271f6846b7b8a9aefa8a5a5a81ea58df3b3c"),
    (MEM0, "evaluation/metrics/utils.py", "83f3fc14e4eff62be1ab07501ba61a912f15aa20856c7a008bb8799706e0e11d"),
    (MEM0, "evaluation/prompts.py", "407bea1c1453dc6832c234bb1ed936d401d796fabcc0b28337a47ba63517d3ba"),
    (MEM0, "evaluation/src/memzero/add.py", "beae2344fcaccf243b0b594a9b4cdca974bf88201ea73b2dbfc0cde8e145dfa0"),
    (MEM0, "evaluation/src/memzero/search.py", "a0fd676c66b803de40d89503b1427f0e11d93883741d156724e1079b8f193afb"),
    (MEM0, "evaluation/src/zep/add.py", "b33a46d6d9df64f0486709e49ef767fa1385b6ed1938b1a6da71b894c9a574fa"),
    (MEM0, "evaluation/src/zep/search.py", "6681d37cc766d5960f671f4e680f75ab86778ef0214712445ff63ee8449d35c3"),
    (ORGMEMBENCH, "LICENSE", "e74742eff8d3245f1558aeb047f002bfef2d77a32f45e15881918315bda75397"),
    (ORGMEMBENCH, "orgmembench/answerer.py", "5edeb4a92c115940679e164b03920a0a6c7fc46a6087ad55c28a5c5860179c00"),
    (ORGMEMBENCH, "orgmembench/judge.py", "893f784334be88f0ff6febd1301c3c52cf036d4fd96642ab8296a6363d2ae50b"),
)
OFFICIAL_FILES: dict[str, OfficialFile] = {f.local: f for f in (OfficialFile(u, p, h) for u, p, h in _PINS)}


def official_file(local: str) -> OfficialFile:
    """The pin of ``<folder>/<path>`` (KeyError names the known files)."""
    try:
        return OFFICIAL_FILES[local]
    except KeyError:
        raise KeyError(f"no pinned official file {local!r}; known: {sorted(OFFICIAL_FILES)}") from None
