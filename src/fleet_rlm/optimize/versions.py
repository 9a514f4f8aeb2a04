"""What a saved program version holds: the program JSON (instructions, runtime mapping, DSPy state) and its
manifest (module, dataset, scores, versions of dspy/gepa/fleet-rlm), so a version can be audited and reloaded."""

from __future__ import annotations

from importlib import metadata
from typing import Any

from fleet_rlm.optimize.gepa_run import GEPAOutcome
from fleet_rlm.optimize.modules import OptimizableModule, runtime_instructions


def _version_of(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def program_json(module: OptimizableModule, outcome: GEPAOutcome) -> dict[str, Any]:
    return {
        "module": module.name,
        "instructions": dict(outcome.instructions_after),
        "runtime": runtime_instructions(module, outcome.instructions_after),
        "state": outcome.state,
    }


def manifest(
    module: OptimizableModule,
    outcome: GEPAOutcome,
    *,
    run_id: str,
    dataset: dict[str, Any],
    config: dict[str, Any],
) -> dict[str, Any]:
    return {
        "module": module.name,
        "kind": module.kind,
        "optimization_run_id": run_id,
        "dataset": dataset,
        "metric": module.metric_name,
        "config": config,
        "scores": {"baseline": outcome.baseline_score, "optimized": outcome.optimized_score},
        "metric_calls": outcome.metric_calls,
        "iterations": outcome.iterations,
        "dspy_version": _version_of("dspy"),
        "gepa_version": _version_of("gepa"),
        "fleet_rlm_version": _version_of("fleet-rlm"),
    }


def results_json(outcome: GEPAOutcome) -> dict[str, Any]:
    """Per-example results: validation rows with baseline and optimized output and score side by side."""
    optimized = {r.index: r for r in outcome.optimized}
    examples = []
    for base in outcome.baseline:
        after = optimized.get(base.index)
        examples.append(
            {
                "index": base.index,
                "inputs": base.inputs,
                "expected": base.expected,
                "baseline": {"output": base.output, "score": base.score, "feedback": base.feedback},
                "optimized": (
                    {"output": after.output, "score": after.score, "feedback": after.feedback} if after else None
                ),
            }
        )
    return {
        "examples": examples,
        "instructions_before": dict(outcome.instructions_before),
        "instructions_after": dict(outcome.instructions_after),
    }
