"""The suite's subcommands of ``numaspec``: conformance, replay, expectations, report, vectors,
bench, matrix.  Each returns an exit status and prints errors as one line naming what and where."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from numaspec.conformance.implementations.connection import (
    DEFAULT_MAX_LINE,
    DEFAULT_START_TIMEOUT,
    DEFAULT_TIMEOUT,
    connect,
)
from numaspec.errors import InvalidFieldError, MalformedJSONError, NumaspecError

__all__ = ["dispatch", "load_replay_case", "replay"]

EXIT_DIFFERENT, EXIT_USAGE = 1, 4


def dispatch(args: argparse.Namespace) -> int:
    try:
        if args.command == "conformance":
            return _conformance(args)
        if args.command == "replay":
            return replay(args.file, args.id, args.impl,
                          timeout=args.timeout or DEFAULT_TIMEOUT, explain=args.explain)
        if args.command == "expectations":
            return _expectations(args)
        if args.command == "report":
            return _report(args)
        if args.command == "vectors" and args.vectors_command == "export":
            from numaspec.conformance.cases.go_export import main as export_main
            from numaspec.conformance.cases.go_export import release_of
            from numaspec.conformance.properties.random_cases import answered_merge_cases

            sample = answered_merge_cases(release_of(args.go), args.random, args.seed)
            return export_main(args.go, out=args.out, files=args.files, sample=sample,
                               seed=args.seed)
        if args.command == "vectors":
            from numaspec.conformance.cases.vectors import run as vectors_run

            return vectors_run(args)
        if args.command == "findings":
            from numaspec.conformance.cases import upstream_findings

            if args.findings_command == "show":
                for ident in args.ids:
                    print(upstream_findings.show(ident))
                return 0
            return upstream_findings.main(getattr(args, "ids", ()),
                                          what=getattr(args, "export_what", "go"),
                                          out=getattr(args, "out", None),
                                          listing=args.findings_command == "list")
        if args.command == "rule":
            return _rule(args)
        if args.command == "check":
            from numaspec.conformance.checking.command import run as check_run

            return check_run(args)
        if args.command == "differential":
            return _differential(args)
        if args.command == "behaviour-diff":
            from numaspec.conformance.running import behaviour_diff

            for name in ("cases", "large_cases", "shrink", "max_permutations"):
                if getattr(args, name) < 0:
                    raise InvalidFieldError(f"must be 0 or more, got {getattr(args, name)}",
                                            where="--" + name.replace("_", "-"))
            return behaviour_diff.main(args.base, args.patched, cases=args.cases,
                                       large_cases=args.large_cases, seed=args.seed,
                                       shrink=args.shrink, sizes=args.sizes,
                                       max_permutations=args.max_permutations, out=args.out,
                                       timeout=args.timeout, progress=args.progress)
        if args.command == "fuzz":
            from numaspec.conformance.running import fuzz

            return fuzz.main(args.requests, seed=args.seed,
                             commands=tuple(args.commands) or tuple(fuzz.COMMANDS),
                             timeout=args.timeout, out=args.out, progress=args.progress)
        if args.command == "matrix":
            from numaspec.conformance.running.matrix import main as matrix_main

            return matrix_main(args)
        if args.command == "bench":
            if args.sizes is not None:
                from numaspec.conformance.running import sizes

                return sizes.main(args.sizes or None, args.against,
                                  impl_max_permutations=args.max_permutations,
                                  timeout=600.0)
            from numaspec.conformance.running.bench import bench

            # --jobs 1 is bench's own default; other values go to its sharded run
            jobs = {"jobs": args.jobs} if args.jobs != 1 else {}
            if args.baseline is not None:
                if args.jobs != 1:
                    print("numaspec bench: --baseline runs in one process: leave out --jobs",
                          file=sys.stderr)
                    return EXIT_USAGE
                return bench(args.impl, cases=args.cases, seed=args.seed, window=args.window,
                             baseline=args.baseline)
            return bench(args.impl, cases=args.cases, seed=args.seed, window=args.window,
                         **jobs)
    except NumaspecError as exc:
        print(f"numaspec {args.command}: {exc.describe()}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # the reader of stdout (| head) has gone: no traceback
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so that exit does not complain
        return EXIT_DIFFERENT
    raise AssertionError(args.command)  # pragma: no cover - argparse knows the commands


def _rule(args: argparse.Namespace) -> int:
    """``numaspec rule ID...``: each rule's statement, releases, upstream and checks."""
    from numaspec.rules import find_rule, rule_link

    rules = [find_rule(i) for i in args.ids]
    if args.json:
        print(json.dumps([{"id": r.id, "title": r.title, "chapter": r.file, "line": r.line,
                           "holds_in": r.meta.get("Holds in", ""),
                           "upstream": r.meta.get("Upstream", ""),
                           "judged": r.meta.get("Judged", ""),
                           "checked_by": [c.strip() for c in
                                          r.meta.get("Checked by", "").split(",") if c.strip()],
                           "statement": r.statement(), "link": rule_link(r.id)}
                          for r in rules], indent=1))
        return 0
    from rich.console import Console
    from rich.markdown import Markdown

    console = Console(highlight=False)
    # Rich pads wrapped and Markdown lines to the width: print them without the padding.
    with console.capture() as captured:
        for n, rule in enumerate(rules):
            if n:
                console.rule()
            console.print(f"[bold]{rule.id}: {rule.title}[/bold]  "
                          f"(spec/{rule.file}:{rule.line})")
            for key in ("Holds in", "Upstream", "Judged", "Checked by"):
                if key in rule.meta:
                    console.print(f"[bold]{key}:[/bold] {rule.meta[key]}", overflow="fold")
            console.print()
            console.print(Markdown(rule.statement()))
            link = rule_link(rule.id)
            if link:
                console.print(f"\n{link}", overflow="fold")
    sys.stdout.write("".join(line.rstrip() + "\n"
                             for line in captured.get().splitlines()))
    return 0


def _conformance(args: argparse.Namespace) -> int:
    from numaspec.conformance.running.runner import RunConfig, run_conformance

    config = RunConfig(
        impl=args.impl, out=args.out, report=args.report, markdown=args.markdown,
        junitxml=args.junitxml, expectations=args.expectations,
        timeout=args.timeout or DEFAULT_TIMEOUT, max_line=args.max_line or DEFAULT_MAX_LINE,
        start_timeout=args.start_timeout or DEFAULT_START_TIMEOUT,
        strict=args.strict, properties=not args.no_properties, vectors=not args.no_vectors,
        vector_files=tuple(args.vector_files),
        profile=args.profile, keyword=args.keyword, progress=args.progress,
        fail_fast=args.fail_fast, seed=args.seed)
    if args.differential is not None:
        config.differential = args.differential
    if args.differential_seconds is not None:
        config.differential_seconds = args.differential_seconds
    return run_conformance(config)


def _differential(args: argparse.Namespace) -> int:
    from numaspec.conformance.properties.random_cases import CaseShape
    from numaspec.conformance.running import differential
    from numaspec.conformance.running.sharding import engine_from_args

    shape = CaseShape(args.shape, max_permutations=args.max_permutations,
                      numa_nodes=_node_range(args.numa_nodes))
    return differential.main(args.impl, cases=args.cases, seed=args.seed, out=args.out,
                             shrink=args.shrink, shape=shape, engine=engine_from_args(args),
                             timeout=args.timeout, progress=args.progress,
                             expectations=args.expectations)


def _node_range(text: str) -> tuple[int, int]:
    """``--numa-nodes``: ``N`` or ``LOW-HIGH``."""
    low, _, high = text.partition("-")
    try:
        return int(low), int(high or low)
    except ValueError:
        raise InvalidFieldError(f"must be N or LOW-HIGH, got {text!r}",
                                where="--numa-nodes") from None


def _expectations(args: argparse.Namespace) -> int:
    from numaspec.conformance.cases.expectations import load_manifest, regenerate
    from numaspec.conformance.running.reports import read_report

    header, records, _ = read_report(args.report)
    previous = load_manifest(args.previous) if args.previous else None
    name = str((header.get("implementation") or {}).get("name", ""))
    text = json.dumps(regenerate(records, name, previous), indent=1) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def _report(args: argparse.Namespace) -> int:
    from numaspec.conformance.running.reports import (
        junit_xml,
        markdown_summary,
        read_report,
        terminal_summary,
    )

    header, records, footer = read_report(args.report)
    if args.format == "markdown":
        sys.stdout.write(markdown_summary(header, records, footer))
    elif args.format == "junit":
        sys.stdout.write(junit_xml(header, records, footer))
    else:
        print("\n".join(terminal_summary(header, records, footer)))
    return int(footer.get("exit_status", 0))


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidFieldError(f"cannot read: {exc.strerror or exc}", where=path) from None


def load_replay_case(path: str, case_id: str | None) -> tuple[str, str, Any, Any]:
    """(id, op, case, expected or None) from a report, a vector file or one case's JSON."""
    text = _read_text(path)
    candidates: list[dict[str, Any]] = []
    document: Any = None
    try:
        document = json.loads(text)
        if isinstance(document, dict) and isinstance(document.get("vectors"), list):
            candidates = [v for v in document["vectors"] if isinstance(v, dict)]
        elif isinstance(document, dict):
            candidates = [document]
    except json.JSONDecodeError:
        for number, line in enumerate(text.splitlines(), 1):  # a JSON Lines report
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise MalformedJSONError(f"neither JSON nor JSON Lines: {exc.msg}",
                                         where=f"{path}:{number}") from None
            if isinstance(item, dict) and item.get("type") == "case":
                candidates.append(item)
    if case_id is not None:
        exact = [c for c in candidates if c.get("id") == case_id]
        if not exact and "@" in case_id and isinstance(document, dict) and "vectors" in document:
            return _vector_instance(path, text, case_id)
        candidates = exact
        if not candidates:
            raise InvalidFieldError(f"no case with the ID {case_id!r}", where=path)
    if len(candidates) != 1:
        raise InvalidFieldError(f"holds {len(candidates)} cases; name one with --id",
                                where=path)
    chosen = candidates[0]
    if "counterexample" in chosen:  # a failed property: its shrunk request
        return (str(chosen.get("id", "")), str(chosen.get("op", "merge")),
                chosen["counterexample"], None)
    if "case" not in chosen:
        raise InvalidFieldError("this record carries no case to re-run (a property that did "
                                "not fail, or a case skipped before it ran)", where=path)
    return (str(chosen.get("id", "case")), str(chosen.get("op", "merge")), chosen["case"],
            chosen.get("expected"))


def _vector_instance(path: str, text: str, case_id: str) -> tuple[str, str, Any, Any]:
    """RUN-10: ``<vector>@1.N`` in a vector file: the vector's instance at 1.N."""
    from numaspec.conformance.cases.vectors import holds_in, instance_at, load_vector_file, split_id

    base, release = split_id(case_id)
    found = [v for v in load_vector_file(path, text) if v.id == base]
    if not found:
        raise InvalidFieldError(f"no vector with the ID {base!r}", where=path)
    releases = holds_in(found[0])
    if release not in releases:
        held = ", ".join(r or "its own case only" for r in releases)
        raise InvalidFieldError(f"{base} holds in {held}, not {release!r}", where=path)
    instance = instance_at(found[0], release)
    return instance.id, found[0].op, instance.case, instance.expected


def replay(path: str, case_id: str | None, impl: str, *, timeout: float = DEFAULT_TIMEOUT,
           explain: bool = False) -> int:
    """RUN-8: re-run one case against ``impl`` and print both answers, and how they differ."""
    from numaspec.conformance.cases.judges import compare
    from numaspec.conformance.cases.vectors import case_version
    from numaspec.protocols.adapter_protocol import reference_result, sent_case

    name, op, case, expected = load_replay_case(path, case_id)
    reference = reference_result(op, case)
    connection = connect(impl, timeout=timeout, max_line=DEFAULT_MAX_LINE, strict=True)
    try:
        # RUN-4, as the runner decides: a case whose version numaspec does not model goes to
        # every implementation of the operation.
        refusal = connection.implementation.declares(op, case_version(op, case) or None)
        if refusal is not None:
            raise InvalidFieldError(f"not re-run: {refusal}", where=name)
        answer = connection.run(op, sent_case(op, case))
    finally:
        connection.close()

    def show(value: Any) -> str:
        return json.dumps(value, indent=1)

    print(f"case {name} ({op}):\n{show(case)}")
    if op == "predict":
        print("(the implementation is sent this case without its steps: PRED-1)")
    if expected is not None:
        print(f"\nexpected (recorded):\n{show(expected)}")
    print(f"\nreference (numaspec, now):\n{show(reference)}")
    if explain:
        from numaspec.protocols.explain import explain_case

        traces = explain_case(op, case)
        print(f"\nwhy (the reference's trace, EXPLAIN-4; {len(traces)} "
              f"{'trace' if len(traces) == 1 else 'traces'}):\n{show(traces)}")
    who = connection.implementation.name
    if answer.status != "result":
        print(f"\n{who}: {answer.status}: {answer.message}")
        for key, value in (("offending bytes", answer.offending), ("stderr", answer.stderr)):
            if value:
                print(f"{key}:\n{value}")
        return EXIT_DIFFERENT
    print(f"\n{who}:\n{show(answer.result)}")
    if op == "predict":
        from numaspec.conformance.cases.predictions import judge

        verdict, message = judge(reference, answer.result)
        print(f"\n{verdict}" + (f": {message}" if message else ""))
        return 0 if verdict == "passed" else EXIT_DIFFERENT
    differences = compare(op, case, reference, answer.result)
    print("\n" + ("agrees with the reference" if not differences else
                  "differs from the reference:\n  " + "\n  ".join(differences)))
    if differences and op == "merge":
        from numaspec.conformance.cases.decisions import blame

        found = blame(case, reference, answer.result)
        if found.rules:
            # RUN-17: the rules whose decision differs, and the quantities compared
            print(f"decided by {', '.join(found.rules)}"
                  + "".join(f"\n  {why}" for why in found.why))
    return EXIT_DIFFERENT if differences else 0
