"""The evaluation-path analysis: from where a package is used, out to the entry points.

Walking outward through `Repo.callers` (callers, importers, commands that run a script),
each step passes code whose names say what it is for (`Repo.groups`). The innermost
strong word decides (`test` in `test_model`, `valid` in `ValidMetric`, `reward` in
`reward_utils.py`); without one, the outermost weak word does (the README heading
"Evaluation" over `train.py -mode eval`, `train.py` over its `evaluate()` during
training); with neither the path counts as evaluation. A use is on the evaluation path
when some path to an entry point ends as evaluation; it is training code when every path
ends as training; unreached when no path reaches an entry point. The word lists are data
(`[roles]` in the catalog).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from review.codebases.catalog import Roles
from review.codebases.scan.report import EVALUATION, TRAINING, UNREACHED
from review.codebases.scan.repo import CMD, ENTRY, Node, Repo

MAX_STEPS = 4000  # node expansions per walk; beyond, the walk stops and says so


@dataclass
class PathResult:
    role: str  # evaluation | training | unreached
    path: list[Node] = field(default_factory=list)  # from the use out to the entry point
    word: str | None = None  # the word that decided, if any
    stopped: bool = False  # the step budget ran out
    neutral: bool = False  # evaluation only because no word says otherwise

    def explain(self, repo: Repo) -> str:
        if not self.path:
            return "no entry point reaches it" + (" (analysis stopped: budget)" if self.stopped else "")
        chain = " <- ".join(repo.describe(n) for n in self.path[:8])
        more = " <- ..." if len(self.path) > 8 else ""
        why = f" (\"{self.word}\")" if self.word else ""
        return f"{chain}{more}{why}"


@dataclass(frozen=True)
class _State:
    strong: str | None
    weak: str | None
    strong_word: str | None
    weak_word: str | None
    since: int = 0  # nodes walked since the strong word was set (capped at 2)


def _is_function(node: Node) -> bool:
    qual = node[1]
    return bool(qual) and qual != ENTRY and not qual.startswith(CMD) and not qual.startswith("<")


class Walker:
    def __init__(self, repo: Repo, roles: Roles, max_steps: int = MAX_STEPS):
        self.repo = repo
        self.roles = roles
        self.max_steps = max_steps
        self._cache: dict[tuple[Node, ...], PathResult] = {}
        self.stopped = 0

    def role_of(self, starts: list[Node], require_word: bool = False) -> PathResult:
        """The role of code at these nodes; with `require_word`, a path with no word at all
        is not enough for evaluation (it stays unreached, with the path as evidence)."""
        key = (require_word, *sorted(set(starts)))
        if key not in self._cache:
            self._cache[key] = self._walk(list(key[1:]), require_word)
            if self._cache[key].stopped:
                self.stopped += 1
        return self._cache[key]

    def _decide(self, state: _State, node: Node) -> _State:
        strong, weak, sw, ww = state.strong, state.weak, state.strong_word, state.weak_word
        since = min(state.since + 1, 2) if strong else 0
        for group in self.repo.groups(node):
            if strong is None or (strong == TRAINING and sw is not None and self.roles.phases.match(sw)
                                  and since == 1 and _is_function(node)):
                # a phase (validation) run directly by a test function is the test: `test_step`
                # returning `self.validation_step(...)`; a purpose word (reward, oracle) is never
                # overridden, nor is a phase by a README heading, a command or a distant caller
                role, word = self._role(group, self.roles.evaluation_strong, self.roles.training_strong)
                if role and (strong is None or role == EVALUATION):
                    strong, sw, since = role, word, 0
            role, word = self._role(group, self.roles.evaluation, self.roles.training)
            if role:
                weak, ww = role, word
        return _State(strong, weak, sw, ww, since)

    @staticmethod
    def _role(group: list[str], evaluation, training) -> tuple[str | None, str | None]:  # type: ignore[no-untyped-def]
        ev = next((w for w in group if evaluation.match(w)), None)
        tr = next((w for w in group if training.match(w)), None)
        if ev and not tr:
            return EVALUATION, ev
        if tr and not ev:
            return TRAINING, tr
        return None, None

    def _walk(self, starts: list[Node], require_word: bool) -> PathResult:
        queue: deque[tuple[Node, _State]] = deque()
        parent: dict[tuple[Node, _State], tuple[Node, _State] | None] = {}
        for node in starts:
            st = self._decide(_State(None, None, None, None), node)
            if (node, st) not in parent:
                parent[(node, st)] = None
                queue.append((node, st))
        training: PathResult | None = None
        neutral: PathResult | None = None
        steps = 0
        while queue:
            node, st = queue.popleft()
            steps += 1
            if steps > self.max_steps:
                return training or neutral or PathResult(UNREACHED, stopped=True)
            callers = self.repo.callers(node)
            if self._is_entry(node):
                final = st.strong or st.weak or EVALUATION
                word = st.strong_word if st.strong else st.weak_word
                result = PathResult(final, self._path(parent, (node, st)), word, neutral=word is None)
                if final == EVALUATION and (word or not require_word):
                    return result
                if final == EVALUATION:
                    neutral = neutral or PathResult(UNREACHED, result.path, None, neutral=True)
                else:
                    training = training or result
            for c in sorted(callers, key=self._evaluation_first):
                nxt = (c.node, self._decide(st, c.node))
                if nxt not in parent:
                    parent[nxt] = (node, st)
                    queue.append(nxt)
        return training or neutral or PathResult(UNREACHED)

    def _evaluation_first(self, caller) -> int:  # type: ignore[no-untyped-def]
        """Visit first the callers whose own words say evaluation (the README's "Test"
        command before its "Train" one), so the path shown is the telling one."""
        words = [w for group in self.repo.groups(caller.node) for w in group]
        return 0 if (self.roles.evaluation_strong.any(words) or self.roles.evaluation.any(words)) else 1

    def _is_entry(self, node: Node) -> bool:
        """An entry point of this repository: a script that runs on its own, or a command its
        READMEs and scripts show; never a command documented inside a copied framework."""
        if node[1].startswith(CMD):
            return not self.repo.is_vendored(node[0])
        return node[1] == ENTRY

    @staticmethod
    def _path(parent: dict, key: tuple[Node, _State]) -> list[Node]:  # type: ignore[type-arg]
        out = []
        cur: tuple[Node, _State] | None = key
        while cur is not None:
            out.append(cur[0])
            cur = parent[cur]
        return out[::-1]
