"""The operator's answers as text on a terminal (spec chapter ``operators.md``, OPS-6..OPS-8,
OPS-12), rendered with Rich: the reason in plain words first, tables for the hints, the rules
named with their titles and links.

Only presentation: the answers are the JSON of :mod:`numaspec.operators.questions`, and ``--json``
prints them as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from numaspec.node.nodeconfig import format_cpuset
from numaspec.operators.reason import CHOSEN, deciding, size_text
from numaspec.protocols.explain import chosen_by

__all__ = ["DEFAULT_WIDTH", "render", "width"]


#: OPS-12: the width when the output is no terminal and COLUMNS is not set.
DEFAULT_WIDTH = 100


def width(out: TextIO, environ: Mapping[str, str] | None = None) -> int:
    """OPS-12: the width to render at: COLUMNS when set (a positive integer), else the
    terminal's own width when ``out`` is one, else :data:`DEFAULT_WIDTH`."""
    import os
    import shutil

    env = os.environ if environ is None else environ
    columns = env.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if out.isatty():
            size = os.get_terminal_size(out.fileno()).columns
            return size if size > 0 else shutil.get_terminal_size().columns
    except (AttributeError, OSError, ValueError):
        pass
    return DEFAULT_WIDTH


def render(answer: Mapping[str, Any], out: TextIO) -> None:
    """Print an explanation, a what-if or a largest-pod answer to ``out``."""
    console = Console(file=out, highlight=False, soft_wrap=False, width=width(out))
    kind = answer.get("kind")
    if kind == "what-if":
        _what_if(console, answer)
    elif kind == "largest":
        _largest(console, answer)
    else:
        _explanation(console, answer)


def _hint(hint: Mapping[str, Any] | None) -> str:
    if hint is None:
        return "-"
    numa = hint.get("numa")
    where = "any NUMA node" if numa is None else "NUMA " + ",".join(map(str, numa))
    return where + ("" if hint.get("preferred") else " (not preferred)")


def _mask(hint: Mapping[str, Any]) -> str:
    numa = hint.get("numa")
    return "any" if numa is None else "{" + ",".join(map(str, numa)) + "}"


def _hints(listed: Sequence[Mapping[str, Any]] | None) -> str:
    if listed is None:
        return "no preference"
    if not listed:
        return "none fits (no placement)"
    preferred = [_mask(h) for h in listed if h.get("preferred")]
    other = [_mask(h) for h in listed if not h.get("preferred")]
    parts = []
    if preferred:
        parts.append("preferred " + " ".join(preferred))
    if other:
        parts.append("not preferred " + " ".join(other))
    return " · ".join(parts)


def _why(hints: Mapping[str, Any], merged: Mapping[str, Any] | None) -> str | None:
    """A sentence for a merged hint that is not preferred: what each provider prefers."""
    if merged is None or merged.get("preferred"):
        return None
    wanted = []
    for provider, answer in hints.items():
        for resource, listed in (answer or {}).items():
            if listed is None:
                continue
            masks = [_mask(h) for h in listed if h.get("preferred")]
            who = resource if resource == provider else f"{resource} ({provider})"
            wanted.append(f"{who} " + (" or ".join(masks) if masks else "nothing"))
    if not wanted:
        return None
    return "no placement is preferred by every provider: " + "; ".join(wanted)


def _cpus(cpus: Sequence[int]) -> str:
    return format_cpuset(cpus) or "-"


def _rules(console: Console, rules: Sequence[str]) -> None:
    """The rules that decided, as an operator uses them (OPS-12: without the merge rules
    that only say the hints left one choice)."""
    rules = deciding(rules)
    if not rules:
        return
    from numaspec.rules import rule_link, rules_by_id

    known = rules_by_id()  # empty where the spec's chapters are not installed: IDs only
    console.print(Text("Rules that decided", style="bold"))
    for rule in rules:
        found = known.get(rule)
        link = rule_link(rule) if found is not None else None
        line = Text(f"  {rule}", style="bold")
        if found is not None:
            line.append(f"  {found.title}")
        console.print(line)
        if link:  # never broken: indented as far as the width leaves room for
            indent = " " * max(0, min(6, console.width - len(link)))
            console.print(Text(f"{indent}{link}", style="dim"), soft_wrap=True)


def _described(version: Any) -> str:
    """VER-1: a release as the answer names it, a pre-release with the one that was read."""
    from numaspec.errors import NumaspecError
    from numaspec.topology.versions import parse_version

    try:
        return parse_version(version).described
    except NumaspecError:
        return str(version)


def _header(console: Console, answer: Mapping[str, Any]) -> None:
    node = answer.get("node") or {}
    pod = answer.get("pod") or {}
    tm = node.get("topology_manager") or {}
    options = ", ".join(f"{k}={v}" for k, v in (tm.get("options") or {}).items())
    console.print(Text(f"Pod {pod.get('name')} ({pod.get('qos')}) on kubelet "
                       f"{_described(node.get('kubelet_version'))}", style="bold"))
    sources = node.get("sources") or {}
    for key in ("kubelet version", "devices"):
        if key in sources:  # OPS-13, OPS-14: what numaspec inferred, said before the answer
            console.print(Text(f"  {key}: {sources[key]}", style="yellow"))
    for line in answer.get("warnings") or []:
        console.print(Text(f"  warning: {line}", style="bold yellow"))
    cpu = node.get("cpu_manager") or {}
    console.print(f"  Topology Manager {tm.get('policy')}, scope {tm.get('scope')}"
                  + (f", options {options}" if options else ""))
    console.print(f"  CPU Manager {cpu.get('policy')}"
                  + (f" (reserved CPUs {_cpus(cpu['reserved'])})" if cpu.get("reserved") else "")
                  + f"; Memory Manager {(node.get('memory_manager') or {}).get('policy')}")
    console.print(f"  NUMA nodes {', '.join(map(str, node.get('numa_nodes') or []))}; "
                  f"{node.get('cpus')} CPUs"
                  + "".join(f"; {n} {r}" for r, n in (node.get("devices") or {}).items()))
    restored = answer.get("restored") or {}
    active = restored.get("active") or []
    console.print(f"  Running pods restored: {len(active)}")
    for line in [*(restored.get("terminated") or []), *(restored.get("stale") or [])]:
        console.print(Text(f"  note: {line}", style="yellow"))
    for line in restored.get("restart_warnings") or []:
        console.print(Text(f"  warning: {line}", style="bold yellow"))
    if restored.get("caveat"):
        console.print(Text(f"  caveat: {restored['caveat']}", style="bold yellow"))


def _decision(console: Console, answer: Mapping[str, Any]) -> None:
    decision = answer.get("decision") or {}
    if decision.get("admitted"):
        console.print(Text("ADMITTED", style="bold green"))
        table = Table(show_edge=False, pad_edge=False, box=None)
        for column in ("container", "NUMA affinity", "CPUs", "memory", "devices"):
            table.add_column(column)
        for c in decision.get("containers") or []:
            memory = ", ".join(f"{b['type']} {size_text(b['size'])} on NUMA "
                               f"{','.join(map(str, b['numa']))}" for b in c.get("memory") or [])
            devices = ", ".join(f"{r}: {', '.join(ids)}"
                                for r, ids in (c.get("devices") or {}).items())
            table.add_row(c.get("name"), _hint(c.get("hint")), _cpus(c.get("cpus") or []),
                          memory or "-", devices or "-")
        console.print(table)
        return
    console.print(Text(f"REJECTED: {decision.get('reason')}", style="bold red")
                  + Text(f"  {decision.get('message')}"))
    refused = answer.get("refused") or {}
    if refused:
        console.print(f"  refused by: {refused.get('by')}, rule {refused.get('rule')}")


#: OPS-12: a provider without hints, by what its silence means (the provider's code).
_SILENT = {
    ("cpu", None): "no preference: it manages nothing this asks (no exclusive CPUs)",
    ("memory", None): "no preference: it manages nothing this asks (not a Guaranteed pod, "
                      "or memory it does not pin)",
    ("devices", None): "no preference: it manages nothing this asks",
    ("devices", False): "no preference: it manages nothing this asks (no device)",
    ("memory", False): "nothing fits: no set of NUMA nodes passes its check for the memory "
                       "asked (the merge reads this as no preference)",
    ("cpu", False): "nothing fits: no set of NUMA nodes has the CPUs asked free",
}


def _silent(provider: str, hints: object) -> str:
    """OPS-12: ``None`` (no preference: nothing it manages is asked) and ``{}`` (the Device
    Manager: no device asked; the Memory Manager: no placement fits) said apart."""
    key = (provider, None if hints is None else False)
    return _SILENT.get(key, "no preference" if hints is None else "no hints")


def _off(node: Mapping[str, Any]) -> list[str]:
    """OPS-12: the hint providers switched off (policy none): kubelet asks them nothing."""
    off = []
    if (node.get("cpu_manager") or {}).get("policy") == "none":
        off.append("cpu")
    if (node.get("memory_manager") or {}).get("policy") in ("none", "None"):
        off.append("memory")
    return off


def _steps(console: Console, trace: Mapping[str, Any], off: Sequence[str] = ()) -> None:
    for step in trace.get("steps") or []:
        who = step.get("container")
        title = f"container {who}" if who else "the pod (pod scope)"
        if step.get("hints") is None:
            console.print(Text(f"{title}: the none policy asks no provider "
                               f"({step.get('rule')})", style="bold"))
            continue
        console.print(Text(title, style="bold"))
        table = Table(show_edge=False, pad_edge=False, box=None)
        table.add_column("provider")
        table.add_column("resource")
        table.add_column("hints")
        given = step.get("hints") or {}
        for provider, hints in given.items():
            if hints is None or not hints:
                table.add_row(provider, "-", _silent(provider, hints))
                continue
            for resource, listed in hints.items():
                table.add_row(provider, resource, _hints(listed)
                              if listed is not None else "no preference (no NUMA topology "
                              "for this resource)")
        for provider in off:
            if provider not in given:
                table.add_row(provider, "-", "off (policy none): gives no hints")
        console.print(table)
        merge = step.get("merge") or {}
        result = merge.get("result") or {}
        why = chosen_by(merge)
        words = CHOSEN.get(why)
        console.print(f"  merged hint: {_hint(result.get('hint'))}"
                      + (f" (chosen by {why}: {words})" if why and words
                         else f" (chosen by {why})" if why else "")
                      + f"; {merge.get('decided_by')} "
                      + ("admits" if result.get("admit") else "refuses"))
        because = _why(step.get("hints") or {}, result.get("hint"))
        if because:
            console.print(f"  {because}")


def _free(console: Console, free: Mapping[str, Any]) -> None:
    if not free:
        return
    console.print(Text("Free for exclusive use, per NUMA node, before admission",
                       style="bold"))
    for numa, entry in free.items():
        parts = []
        if "cpus" in entry:
            parts.append(f"CPUs {_cpus(entry['cpus'])} ({len(entry['cpus'])})")
        for kind, amount in (entry.get("memory") or {}).items():
            parts.append(f"{kind} {size_text(amount)}")
        for resource, ids in (entry.get("devices") or {}).items():
            parts.append(f"{resource} {len(ids)}")
        console.print(f"  NUMA {numa}: " + ("; ".join(parts) or "-"))


#: DRA-12: why nothing aligns a pair, by the rule that says so.
_NOTHING = {"DEV-8": "the Topology Manager does not see DRA devices",
            "DRA-6": "no constraint of one claim names both",
            "POLICY-1": "the none policy aligns nothing"}


def _aligned(pair: Mapping[str, Any]) -> str:
    """DRA-12: what aligned a pair, in words."""
    by = pair.get("aligned_by") or ""
    rule = pair.get("rule")
    if by == "topology-manager":
        return f"Topology Manager ({rule})"
    return f"{by or 'nothing'} ({rule})"


def _dra(console: Console, dra: Mapping[str, Any]) -> None:
    """OPS-11: the scheduler's allocation of the pod's claims, and what aligns what."""
    allocation = dra.get("allocation") or {}
    console.print(Text(f"DRA: the scheduler's allocator ({dra.get('release')}) on node "
                       f"{dra.get('node')}", style="bold"))
    for line in dra.get("search") or []:
        console.print(f"  {line}")
    for line in dra.get("claims") or []:
        console.print(f"  claim {line}")
    if not dra.get("scheduled"):
        console.print(Text(f"  not schedulable here: {allocation.get('outcome')}"
                           + (f": {allocation['message']}" if allocation.get("message") else ""),
                           style="bold red"))
    reasons: list[str] = []
    for container in dra.get("containers") or []:
        placed = container.get("placed") or []
        if not placed:
            continue
        pairs = container.get("pairs") or []
        loose = [p for p in pairs if not p.get("aligned_by")]
        apart = [p for p in loose if p.get("as_placed") in ("apart", "overlapping")]
        summary = (f"nothing aligns {len(loose)} of its {len(pairs)} pairs"
                   + (f", and {len(apart)} of those are not on one NUMA node" if apart else ""))
        console.print(Text(f"  container {container.get('name')}: {summary}", style="bold"))
        table = Table(show_edge=False, pad_edge=False, box=None)
        for column in ("    holds", "placed by", "NUMA", "what"):
            table.add_column(column)
        for item in placed:
            numa = item.get("numa")
            what = ", ".join(item.get("items") or [])
            if item.get("name") == "cpus":
                what = _cpus([int(c) for c in item.get("items") or []])
            elif item.get("by") == "topology-manager" and (
                    item.get("name") == "memory" or str(item.get("name")).startswith("hugepages-")):
                # memory blocks as every other table says them: 16Gi, not 17179869184
                what = ", ".join(size_text(int(size)) if str(size).isdigit() else str(size)
                                 for size in item.get("items") or [])
            if item.get("pcie_roots"):
                what += f" (PCIe root {', '.join(item['pcie_roots'])})"
            table.add_row(f"    {item.get('name')}",
                          "Topology Manager" if item.get("by") == "topology-manager" else "DRA",
                          "unknown" if numa is None else ",".join(map(str, numa)), what)
        console.print(table)
        if not pairs:
            continue
        table = Table(show_edge=False, pad_edge=False, box=None)
        for column in ("    pair", "aligned by", "as placed"):
            table.add_column(column)
        for pair in pairs:
            first, second = pair.get("first"), pair.get("second")
            table.add_row(f"    {first} (among themselves)" if first == second
                          else f"    {first} + {second}", _aligned(pair),
                          str(pair.get("as_placed")))
            if not pair.get("aligned_by") and pair.get("rule") not in reasons:
                reasons.append(str(pair.get("rule")))
        console.print(table)
    for rule in reasons:
        if rule in _NOTHING:
            console.print(Text(f"  nothing ({rule}): {_NOTHING[rule]}", style="dim"))


def _explanation(console: Console, answer: Mapping[str, Any]) -> None:
    if "startup_error" in answer:
        error = answer["startup_error"]
        console.print(Text(f"kubelet would not start: {error.get('message')}", style="bold red"))
        return
    if answer.get("verdict"):
        console.print(Text(str(answer["verdict"]) + ".", style="bold green"
                           if str(answer["verdict"]).startswith("Admitted") else "bold red"))
    if answer.get("reason"):
        console.print(Text("Why: ", style="bold") + Text(str(answer["reason"]) + "."))
        console.print()
    _header(console, answer)
    for note in answer.get("notes") or []:
        console.print(Text(f"  note: {note}", style="yellow"))
    console.print()
    _decision(console, answer)
    console.print()
    if answer.get("dra"):
        _dra(console, answer["dra"])
        console.print()
    _steps(console, answer.get("trace") or {}, _off(answer.get("node") or {}))
    console.print()
    _rules(console, answer.get("rules") or [])
    console.print()
    _free(console, answer.get("free") or {})


def _what_if(console: Console, answer: Mapping[str, Any]) -> None:
    """OPS-7: the outcome with the change first, then what changed, then the answer with the
    change; the answer without it is ``numaspec explain`` without the change (``--json`` has
    both)."""
    after = answer.get("after") or {}
    verdict = str(answer.get("verdict") or "")
    admitted = bool((after.get("decision") or {}).get("admitted"))
    console.print(Text(verdict + ".", style="bold green" if admitted else "bold red"))
    if answer.get("note"):
        console.print(Text(f"note: {answer['note']}", style="yellow"))
    differences = answer.get("differences") or []
    console.print(Text("What changed:", style="bold"))
    if differences:
        for line in differences:
            console.print(f"  {line}")
    else:
        console.print("  nothing in the decision")
    console.print()
    if "startup_error" in after:
        return
    if after.get("reason"):
        console.print(Text("Why, with the change: ", style="bold")
                      + Text(str(after["reason"]) + "."))
        console.print()
    _decision(console, after)
    console.print()
    _rules(console, after.get("rules") or [])
    console.print(Text("The whole answer without and with the change: --json (before, after).",
                       style="dim"))


def _largest(console: Console, answer: Mapping[str, Any]) -> None:
    what = f"{answer.get('resource')} of container {answer.get('container')}"
    if answer.get("largest") is None:
        other = answer.get("qos_without")
        none = (f"none would make the pod {other}, another question" if other
                else "none included")
        console.print(Text(f"No amount of {what} is admitted ({none}; in steps of "
                           f"{answer.get('unit')}, {answer.get('searched')} tried): the rest "
                           "of the pod does not fit as it is", style="bold red"))
        return
    largest = str(answer.get("largest"))
    amount = ("none (the pod is admitted only without it; " if largest in ("0", "0Mi", "0Gi")
              else f"{largest} (")
    console.print(Text(f"Largest {what} admitted: {amount}{answer.get('searched')} sizes "
                       f"tried, in steps of {answer.get('unit')})", style="bold"))
    _decision(console, {"decision": answer.get("decision")})
    _rules(console, answer.get("rules") or [])
