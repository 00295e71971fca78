"""Text about the measures, generated from the registry: the ``retrieval-eval measures`` listing and the
``docs/measures.md`` reference page. Nothing here is written by hand, so it cannot drift from the code.

Regenerate the page with ``python -m retrieval_eval.measures.describe > docs/measures.md``.
"""

from __future__ import annotations

import inspect

from .registry import ALIAS_PARAMS, ALIASES, REGISTRY, MeasureDef


def _parameters(definition: MeasureDef) -> list[str]:
    rows = []
    for name, spec in definition.params.items():
        where = " (written after @)" if name == definition.cutoff else ""
        choices = f"; one of {', '.join(repr(c) for c in spec.choices)}" if spec.choices else ""
        rows.append(f"{name}={spec.default!r}{where}: {spec.description}{choices}")
    return rows


def _trec_names(definition: MeasureDef) -> str:
    names = []
    for trec in definition.trec:
        if trec.cutoff:
            names.append(f"{trec.name}_<cutoff>")
        elif trec.syntax is not None:
            names.append(f"{trec.name} ({trec.name}.<params> -> {trec.name}_<params>)")
        else:
            names.append(trec.name)
    return ", ".join(names)


def _aggregate(definition: MeasureDef) -> str:
    if definition.text:
        return "none (text, per query only)"
    return {
        "mean": "arithmetic mean", "sum": "sum", "gmean": "geometric mean (floor 1e-5)",
        "weighted": "weighted mean (queries of weight 0 left out)",
        "pooled": "pooled: one value from the rows of every query together, not a mean",
    }.get(
        definition.aggregate, definition.aggregate
    )


def listing() -> str:
    """One short block per measure, for ``retrieval-eval measures``."""
    blocks = []
    for definition in REGISTRY.values():
        aliases = f" (aliases: {', '.join(definition.aliases)})" if definition.aliases else ""
        params = "; ".join(_parameters(definition)) or "none"
        trec = _trec_names(definition) or "-"
        blocks.append(
            f"{definition.name}{aliases}\n    {definition.summary}\n    parameters: {params}\n"
            f"    trec_eval: {trec}    summary: {_aggregate(definition)}"
        )
    return "\n".join(blocks) + "\n"


def reference_page() -> str:
    """The Markdown measure reference (``docs/measures.md``)."""
    lines = [
        "# Measure reference",
        "",
        "Generated from the measure registry by `python -m retrieval_eval.measures.describe`; do not edit by hand.",
        "A test fails when this page and the registry disagree.",
        "",
        "Measure strings use ir_measures syntax, `Name(param=value)@cutoff` (for example `P(rel=2)@10`),",
        "or trec_eval names (`P.5,10`, `ndcg_cut.10`, `P_10`). Notation: R = relevant judged documents",
        "(judgment >= rel), NR = judged non-relevant documents (0 <= judgment < rel), n = documents retrieved,",
        "rel@k = relevant documents in ranks 1..k, r_m = rank of the m-th relevant retrieved document.",
        "",
        "| measure | trec_eval name | summary | definition |",
        "|---|---|---|---|",
    ]
    for definition in REGISTRY.values():
        lines.append(
            f"| [{definition.name}](#{definition.name.lower()}) | {_trec_names(definition) or '-'} | "
            f"{_aggregate(definition)} | {definition.summary} |"
        )
    for definition in REGISTRY.values():
        lines += ["", f"## {definition.name}", ""]
        if definition.aliases:
            lines += [f"Aliases: {', '.join(f'`{a}`' for a in definition.aliases)}.", ""]
        lines += [inspect.cleandoc(definition.doc), ""]
        params = _parameters(definition)
        lines += ["Parameters:", ""] + ([f"- `{p.split(':', 1)[0]}`:{p.split(':', 1)[1]}" for p in params] or ["- none"])
        lines += ["", f"trec_eval: {_trec_names(definition) or 'none'}. Summary over queries: {_aggregate(definition)}."]
    for alias, name in ALIASES.items():  # each alias findable under its own name
        implied = ALIAS_PARAMS.get(alias)
        target = str(REGISTRY[name](**implied)) if implied else name
        lines += ["", f"## {alias}", "", f"Another name for [{target}](#{name.lower()}): `{alias}` means `{target}`"
                  + (f", and `{alias}@10` means `{target}@10`." if REGISTRY[name].cutoff and not implied else ".")]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(reference_page(), end="")
