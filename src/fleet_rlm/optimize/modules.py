"""The registry of optimizable modules: what GEPA can improve, what a dataset row must hold, how it is scored.

A module names its DSPy program (built fresh per run), the dataset keys (inputs, expected outputs, optional
inputs), the metric, and `targets`: which runtime program (fleet_rlm.runtime.programs) each optimized
predictor's instructions become when a version is promoted. Task modules and skills have no runtime target;
their promoted versions are served under their own name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import dspy

from fleet_rlm.config import Settings
from fleet_rlm.errors import NotFound
from fleet_rlm.llm.provider import LMProvider
from fleet_rlm.optimize.metrics import METRIC_DESCRIPTIONS, METRICS, Metric
from fleet_rlm.optimize.signatures import CitedAnswer, ExtractFromLogs, SkillTask, SummarizeDocument
from fleet_rlm.runtime.modes.direct import DirectAnswer
from fleet_rlm.runtime.modes.router import RouteTurn
from fleet_rlm.runtime.programs import BUILTIN_INSTRUCTIONS, DIRECT, RLM_ACTION, RLM_EXTRACT, ROUTER

Kind = Literal["program", "task", "skill"]
SKILLS_DIR = Path(__file__).resolve().parent.parent / "skills"


@dataclass(frozen=True)
class BuildContext:
    """What building a module's program needs: settings (sandbox for rlm), LMs by role, seed instructions."""

    settings: Settings
    lms: LMProvider
    instructions: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class OptimizableModule:
    name: str
    kind: Kind
    description: str
    signature: str
    input_keys: tuple[str, ...]
    output_keys: tuple[str, ...]
    optional_keys: tuple[str, ...]
    metric_name: str
    build: Callable[[BuildContext], dspy.Module]
    targets: Mapping[str, str] = field(default_factory=dict)

    @property
    def required_keys(self) -> tuple[str, ...]:
        return self.input_keys + self.output_keys

    @property
    def metric(self) -> Metric:
        return METRICS[self.metric_name]

    def inputs_of(self, row: Mapping[str, Any]) -> dict[str, Any]:
        keys = self.input_keys + self.optional_keys
        return {key: _as_text(row.get(key, "")) for key in keys}

    def example(self, row: Mapping[str, Any]) -> dspy.Example:
        values = self.inputs_of(row) | {key: row.get(key) for key in self.output_keys}
        return dspy.Example(**values).with_inputs(*(self.input_keys + self.optional_keys))

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "signature": self.signature,
            "required_keys": list(self.required_keys),
            "optional_keys": list(self.optional_keys),
            "metric": self.metric_name,
            "metric_description": METRIC_DESCRIPTIONS[self.metric_name],
            "targets": dict(self.targets),
        }


def _as_text(value: Any) -> Any:
    return value if isinstance(value, str) else ("" if value is None else str(value))


class Single(dspy.Module):
    """One predictor under the stable name `predict` (GEPA keys instructions by predictor name)."""

    def __init__(self, predictor: dspy.Module) -> None:
        super().__init__()
        self.predict = predictor

    def forward(self, **kwargs: Any) -> dspy.Prediction:
        result: dspy.Prediction = self.predict(**kwargs)
        return result


class WithLM(dspy.Module):
    """Runs the wrapped program under one role's LM (GEPA evaluates on threads without our dspy.context)."""

    def __init__(self, program: dspy.Module, lm: dspy.BaseLM) -> None:
        super().__init__()
        self.program = program
        self._lm = lm

    def forward(self, **kwargs: Any) -> dspy.Prediction:
        with dspy.context(lm=self._lm):
            result: dspy.Prediction = self.program(**kwargs)
        return result


def _seeded(signature: type[dspy.Signature], ctx: BuildContext, name: str, default: str) -> type[dspy.Signature]:
    text = ctx.instructions.get(name) or default
    return signature.with_instructions(text) if text else signature


def _build_router(ctx: BuildContext) -> dspy.Module:
    sig = _seeded(RouteTurn, ctx, "program.predict", BUILTIN_INSTRUCTIONS[ROUTER])
    return WithLM(Single(dspy.Predict(sig)), ctx.lms("router"))


def _build_direct(ctx: BuildContext) -> dspy.Module:
    sig = _seeded(DirectAnswer, ctx, "program.predict.predict", BUILTIN_INSTRUCTIONS[DIRECT])
    return WithLM(Single(dspy.ChainOfThought(sig)), ctx.lms("root"))


def _build_rlm(ctx: BuildContext) -> dspy.Module:
    from fleet_rlm.sandbox.factory import interpreter_factory

    factory = interpreter_factory(settings=ctx.settings, workspace_id="optimize", returns="transcript")  # as turns
    rlm = dspy.RLM(
        "task: str, context: str -> answer: str",
        max_iters=ctx.settings.max_iters,
        max_llm_calls=ctx.settings.max_llm_calls,
        sub_lm=ctx.lms("sub"),
        interpreter_factory=factory,
    )
    for name in ("generate_action", "extract"):
        text = ctx.instructions.get(f"program.{name}")
        predictor = getattr(rlm, name)
        if text:
            predictor.signature = predictor.signature.with_instructions(text)
    return WithLM(rlm, ctx.lms("root"))


def _task_builder(signature: type[dspy.Signature], chain: bool = False) -> Callable[[BuildContext], dspy.Module]:
    def build(ctx: BuildContext) -> dspy.Module:
        key = "program.predict.predict" if chain else "program.predict"
        sig = _seeded(signature, ctx, key, signature.instructions)
        predictor = dspy.ChainOfThought(sig) if chain else dspy.Predict(sig)
        return WithLM(Single(predictor), ctx.lms("root"))

    return build


def _skill_builder(text: str) -> Callable[[BuildContext], dspy.Module]:
    def build(ctx: BuildContext) -> dspy.Module:
        sig = _seeded(SkillTask, ctx, "program.predict.predict", text)
        return WithLM(Single(dspy.ChainOfThought(sig)), ctx.lms("root"))

    return build


BUILTIN_MODULES: tuple[OptimizableModule, ...] = (
    OptimizableModule(
        name="rlm",
        kind="program",
        description="The RLM turn program: instructions of the REPL action step and of the forced extract step.",
        signature="task: str, context: str -> answer: str (dspy.RLM over the sandbox)",
        input_keys=("task",),
        output_keys=("answer",),
        optional_keys=("context",),
        metric_name="answer_match",
        build=_build_rlm,
        targets={"program.generate_action": RLM_ACTION, "program.extract": RLM_EXTRACT},
    ),
    OptimizableModule(
        name="router",
        kind="program",
        description="The auto-mode router choosing direct, tools or rlm for a task.",
        signature="task: str, context: str -> mode: direct|tools|rlm, reason: str",
        input_keys=("task",),
        output_keys=("mode",),
        optional_keys=("context",),
        metric_name="label_match",
        build=_build_router,
        targets={"program.predict": ROUTER},
    ),
    OptimizableModule(
        name="direct",
        kind="program",
        description="The direct-answer program (chain of thought, no tools).",
        signature="task: str, context: str, history: str -> reasoning, answer: str",
        input_keys=("task",),
        output_keys=("answer",),
        optional_keys=("context", "history"),
        metric_name="answer_match",
        build=_build_direct,
        targets={"program.predict.predict": DIRECT},
    ),
    OptimizableModule(
        name="summarize_document",
        kind="task",
        description="Summarize a long document keeping its key points.",
        signature="document: str -> summary: str",
        input_keys=("document",),
        output_keys=("key_points",),
        optional_keys=(),
        metric_name="key_points",
        build=_task_builder(SummarizeDocument),
    ),
    OptimizableModule(
        name="extract_from_logs",
        kind="task",
        description="Extract the items a question asks for (ids, errors, hosts) from raw log lines.",
        signature="logs: str, question: str -> answer: str (one item per line)",
        input_keys=("logs", "question"),
        output_keys=("answer",),
        optional_keys=(),
        metric_name="items_f1",
        build=_task_builder(ExtractFromLogs),
    ),
    OptimizableModule(
        name="cited_answer",
        kind="task",
        description="Answer from numbered sources and cite the ids of the sources used.",
        signature="question: str, sources: str -> answer: str, citations: list[str]",
        input_keys=("question", "sources"),
        output_keys=("answer", "citations"),
        optional_keys=(),
        metric_name="cited_answer",
        build=_task_builder(CitedAnswer),
    ),
)


def skill_modules(skills_dir: Path = SKILLS_DIR) -> list[OptimizableModule]:
    """One module per bundled skill (`<skills_dir>/<name>/SKILL.md`); the SKILL.md text is the instructions."""
    found: list[OptimizableModule] = []
    if not skills_dir.is_dir():
        return found
    for path in sorted(skills_dir.glob("*/SKILL.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        found.append(
            OptimizableModule(
                name=f"skill.{path.parent.name}",
                kind="skill",
                description=f"The bundled skill '{path.parent.name}' (its SKILL.md text is the instructions).",
                signature="task: str, context: str -> answer: str",
                input_keys=("task",),
                output_keys=("answer",),
                optional_keys=("context",),
                metric_name="answer_match",
                build=_skill_builder(text),
            )
        )
    return found


def list_modules(skills_dir: Path = SKILLS_DIR) -> list[OptimizableModule]:
    return [*BUILTIN_MODULES, *skill_modules(skills_dir)]


def get_module(name: str, skills_dir: Path = SKILLS_DIR) -> OptimizableModule:
    for module in list_modules(skills_dir):
        if module.name == name:
            return module
    raise NotFound(
        f"no optimizable module named {name!r}",
        code="optimization_module_not_found",
        action="list the modules with `fleet-rlm optimize list` or GET /api/v1/optimization/modules",
    )


def runtime_instructions(module: OptimizableModule, instructions: Mapping[str, str]) -> dict[str, str]:
    """Optimized predictor instructions keyed by the runtime program they replace (empty for tasks/skills)."""
    return {target: instructions[name] for name, target in module.targets.items() if name in instructions}
