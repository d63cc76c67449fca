"""``numaspec explain``: would this pod be admitted on my node, where, and if not, why
(spec chapter ``operators.md``, OPS-5..OPS-9).

It reads the node's own files (the importers, :mod:`numaspec.operators.importers`), starts the node
model, restores the running pods and their allocations, and explains the pod's admission;
``--set`` adds a what-if, ``--largest`` the largest pod of this shape that still fits.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any, TextIO

from numaspec.errors import InputFileError, InvalidFieldError, NumaspecError, NumaspecWarning

__all__ = ["add_parser", "run"]

EXIT_OK, EXIT_REJECTED, EXIT_ERROR = 0, 1, 2


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "explain", help="would this pod be admitted on my node, where, and if not, why",
        description="Explain a pod's admission on a node described by its own files: the "
                    "machine (sysfs, hwloc XML or a numaspec machine JSON), the kubelet "
                    "configuration, the running pods and kubelet's state files.  Exit status: "
                    "0 admitted, 1 rejected (or, with --dra, not schedulable on the node), 2 bad "
                    "input.")
    machine = parser.add_argument_group("the machine (one of)")
    machine.add_argument("--sysfs", metavar="DIR",
                         help="a Linux sysfs tree (the node's /sys, or a copy of it)")
    machine.add_argument("--lstopo", metavar="FILE", help="hwloc's XML (lstopo --of xml)")
    machine.add_argument("--machine", metavar="FILE",
                         help="a machine as the node protocol writes one (JSON)")
    parser.add_argument("--devices", metavar="FILE",
                        help="which PCI devices back each extended resource (YAML or JSON; "
                             "with --sysfs or --lstopo)")
    parser.add_argument("--kubelet-config", metavar="FILE", required=True,
                        help="the KubeletConfiguration (YAML or JSON) or the configz endpoint's "
                             "JSON")
    version = parser.add_mutually_exclusive_group()
    version.add_argument("--kubelet-version", metavar="VERSION",
                         help="the node's kubelet release, such as 1.30.14")
    version.add_argument("--node", metavar="FILE",
                         help="the Node object (kubectl get node NAME -o yaml): its kubelet "
                              "version")
    parser.add_argument("--state-dir", metavar="DIR",
                        help="kubelet's root directory (or a copy): cpu_manager_state, "
                             "memory_manager_state, device-plugins/kubelet_internal_checkpoint")
    parser.add_argument("--pods", metavar="FILE", action="append", default=[],
                        help="the pods running on the node (kubectl get pods -A "
                             "--field-selector spec.nodeName=NODE -o yaml); repeatable")
    parser.add_argument("--pod", metavar="FILE", required=True,
                        help="the pod to explain (a Pod, or a workload with a pod template)")
    parser.add_argument("--name", metavar="NAME",
                        help="which pod of --pod, when the file holds several")
    parser.add_argument("--set", dest="changes", metavar="KEY=VALUE", action="append",
                        default=[], help="what-if: change a KubeletConfiguration field (or "
                                         "kubeletVersion) and show what changes; repeatable")
    parser.add_argument("--request", dest="requests", metavar="CONTAINER.RESOURCE=AMOUNT",
                        action="append", default=[],
                        help="what-if: the pod with one container asking AMOUNT of RESOURCE "
                             "(app.cpu=16, app.memory=8Gi; a limit it sets follows, so a "
                             "Guaranteed pod stays Guaranteed); repeatable, and with --set")
    parser.add_argument("--largest", metavar="RESOURCE",
                        help="the largest amount of RESOURCE (cpu, memory, hugepages-2Mi, an "
                             "extended resource) the pod can ask for and still be admitted, "
                             "and where it lands")
    parser.add_argument("--container", metavar="NAME",
                        help="with --largest: the container to grow (default: the first app "
                             "container)")
    dra = parser.add_argument_group("DRA (the pod's resource claims)")
    dra.add_argument("--dra", metavar="FILE", action="append", default=[],
                     help="the cluster's ResourceSlices, DeviceClasses, ResourceClaims and "
                          "ResourceClaimTemplates (resource.k8s.io/v1, YAML or JSON, as kubectl "
                          "get -o yaml prints them); repeatable: what the scheduler would "
                          "allocate the pod's claims on this node, and what aligns with what")
    dra.add_argument("--dra-release", metavar="1.N",
                     help="the scheduler's Kubernetes release (default: the kubelet's)")
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")
    return parser


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """The command; every bad input is one line on stderr and exit status 2."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        with warnings.catch_warnings(record=True) as caught:
            # KCONF-12: what the importers went on past is part of the answer, first
            warnings.simplefilter("always", NumaspecWarning)
            answer = _answer(args)
        read = [w.message.describe() for w in caught if isinstance(w.message, NumaspecWarning)]
        for other in caught:
            if not isinstance(other.message, NumaspecWarning):
                warnings.warn_explicit(other.message, other.category, other.filename,
                                       other.lineno)
        if read:
            answer["warnings"] = [*dict.fromkeys(read), *answer.get("warnings", [])]
    except NumaspecError as exc:
        print(f"numaspec explain: {exc.kind}: {exc.describe()}{_no_numa_folder(args)}"
              f"{_no_plugin_hint(args, exc)}", file=err)
        return EXIT_ERROR
    if args.json:
        json.dump(answer, out, indent=2)
        out.write("\n")
    else:
        from numaspec.operators.render import render

        render(answer, out)
    decision = _final_decision(answer)
    return EXIT_OK if decision else EXIT_REJECTED


def _no_plugin_hint(args: argparse.Namespace, exc: NumaspecError) -> str:
    """OPS-15: a resource no device on the machine backs: name the flag that maps them."""
    if "no device plugin on this node serves" not in exc.describe() or args.machine:
        return ""
    return ": give --devices FILE (which PCI devices back each extended resource)"


def _no_numa_folder(args: argparse.Namespace) -> str:
    """SYSFS-7: a sysfs copy without ``devices/system/node`` is read as cadvisor reads a kernel
    built without NUMA (a node per socket); the answer, or an error that follows, says so,
    since a copy that left the folder out is the likelier cause."""
    if not args.sysfs or not Path(args.sysfs).is_dir():
        return ""
    folder = Path(args.sysfs) / "devices" / "system" / "node"
    if folder.is_dir() or not folder.parent.joinpath("cpu").is_dir():
        return ""  # no devices/system/cpu: not a sysfs root, which the error says itself
    return (f" (note: {folder} is missing, so the machine was read the way cadvisor reads a "
            "kernel built without NUMA: one NUMA node per socket; if the copy left the "
            "folder out, copy it too)")


def _final_decision(answer: dict[str, Any]) -> bool:
    if answer.get("kind") == "largest":
        return answer.get("largest") is not None
    final = answer.get("after") if answer.get("kind") == "what-if" else answer
    if ((final or {}).get("dra") or {}).get("scheduled") is False:
        return False  # DRA-11: the scheduler does not place it here; kubelet never sees it
    return bool(((final or {}).get("decision") or {}).get("admitted"))


def _answer(args: argparse.Namespace) -> dict[str, Any]:
    from numaspec.operators.questions import (
        explain_pod,
        largest_pod,
        parse_change,
        parse_request,
        what_if,
    )

    changes = [parse_change(text) for text in args.changes]
    files = node_files(args)
    imported = _the_pod(args.pod, args.name)
    pod, claims = imported.pod, imported.resource_claims
    dra = _dra_question(args, imported, files)
    requests = [parse_request(text, pod) for text in args.requests]
    if args.largest:
        if changes or requests:
            raise InvalidFieldError("--largest and a what-if (--set, --request) are separate "
                                    "questions: ask one", where="--largest")
        answer = largest_pod(files, pod, args.largest, container=args.container)
    elif changes or requests:
        answer = what_if(files, pod, changes, resource_claims=claims, dra=dra,
                         requests=requests)
    else:
        answer = explain_pod(files, pod, resource_claims=claims, dra=dra)
    from numaspec.operators.pod_shape import qos_warnings

    warnings = qos_warnings(pod)
    if warnings:
        answer["warnings"] = [*answer.get("warnings", []), *warnings]
    return answer


def _dra_question(args: argparse.Namespace, imported: Any, files: Any) -> Any:
    """OPS-11: the DRA part of the question, when ``--dra`` is given."""
    if not args.dra:
        if args.dra_release:
            raise InvalidFieldError("--dra-release goes with --dra FILE", where="--dra-release")
        return None
    from numaspec.operators.dra_question import DraQuestion
    from numaspec.operators.importers.dra_objects import node_of, read_dra_objects

    objects = read_dra_objects(args.dra)
    name, labels = node_of(objects, args.node)
    release = args.dra_release or f"1.{files.config.kubelet_version.minor}"
    return DraQuestion(imported, objects, release, name, labels)


def node_files(args: argparse.Namespace) -> Any:
    """The :class:`~numaspec.operators.questions.NodeFiles` the options name."""
    from numaspec.operators.importers import checkpoints, kube_objects, kubelet_config
    from numaspec.operators.questions import NodeFiles
    from numaspec.operators.restore import RunningPod

    sources: dict[str, str] = {}
    machine = _machine(args, sources)
    version: Any = args.kubelet_version
    if version is not None:
        from numaspec.topology.versions import parse_version

        version = parse_version(version, where="--kubelet-version")
    if args.node:
        version = kubelet_config.read_kubelet_version(args.node)
    if version is None:
        version = _version_from_state(args, sources)
    config = kubelet_config.read_kubelet_config(args.kubelet_config, kubelet_version=version)
    sources["config"] = args.kubelet_config
    running = []
    for path in args.pods:
        for imported in kube_objects.read_pods(path):
            running.append(RunningPod(imported.pod, imported.source, imported.phase,
                                      imported.runtime_ids))
    if args.pods:
        sources["pods"] = ", ".join(args.pods)
    cpu = memory = devices = None
    if args.state_dir:
        if not Path(args.state_dir).is_dir():
            raise InputFileError("not a directory", where=args.state_dir)
        cpu, memory, devices = checkpoints.read_state_dir(args.state_dir,
                                                          minor=config.kubelet_version.minor)
        sources["state"] = args.state_dir
        if not args.pods:
            # OPS-10: the pods only as the state files know them; the answer says so.
            from numaspec.operators.restore import pods_from_state

            running = list(pods_from_state(cpu, memory, devices))
            sources["pods"] = "the state files only (no --pods)"
    return NodeFiles(machine, config, tuple(running), cpu, memory, devices, sources)


_ASK_VERSION = ("give the node's kubelet release with --kubelet-version (such as 1.30.14) or "
                "its Node object with --node FILE (kubectl get node NAME -o yaml: "
                "status.nodeInfo.kubeletVersion)")


def _version_from_state(args: argparse.Namespace, sources: dict[str, str]) -> Any:
    """OPS-13: no ``--kubelet-version`` nor ``--node``: the release the state files' formats
    settle, when only one modelled release writes them (CKPT-1..3, ``FORMAT_READ_BY``);
    otherwise an error naming both flags and what the files narrowed it to."""
    from numaspec.operators.importers import checkpoints
    from numaspec.topology.versions import parse_version

    if not args.state_dir:
        raise InvalidFieldError("the kubelet version is not part of a kubelet configuration: "
                                + _ASK_VERSION, where="--kubelet-version")
    try:
        files = [f for f in checkpoints.read_state_dir(args.state_dir) if f is not None]
    except NumaspecError:
        files = []  # read again, as the release reads them, once the version is given
    from numaspec.node.nodeconfig import NODE_VERSIONS
    from numaspec.topology.versions import PRERELEASES

    low, high = NODE_VERSIONS.start, NODE_VERSIONS.stop - 1
    said = []
    for state in files:
        name = Path(state.path).name
        writers = checkpoints.FORMAT_READ_BY.get((name, state.format), (None, None))[1]
        if writers is None:
            continue
        low, high = max(low, writers[0]), min(high, writers[1])
        said.append(f"{name} format {state.format}")
    released = [m for m in range(low, high + 1) if m not in PRERELEASES]
    if files and len(released) == 1:
        # a pre-release that writes the same formats does not unsettle a released kubelet
        also = "".join(f", and by the pre-release {PRERELEASES[m]}" for m in range(low, high + 1)
                       if m in PRERELEASES)
        low = released[0]
        sources["kubelet version"] = (f"1.{low}, from the state files ({', '.join(said)}: "
                                      f"written only by kubelet 1.{low}{also}; give "
                                      "--kubelet-version to say otherwise)")
        return parse_version(f"1.{low}", where="--state-dir")
    narrowed = (f"; the state files ({', '.join(said)}) were written by kubelet "
                f"1.{low}\u20131.{high}" if said and low <= high else "")
    raise InvalidFieldError("the kubelet version is not part of a kubelet configuration nor "
                            f"settled by the state files{narrowed}: " + _ASK_VERSION,
                            where="--kubelet-version")


def _machine(args: argparse.Namespace, sources: dict[str, str]) -> Any:
    given = [name for name in ("sysfs", "lstopo", "machine") if getattr(args, name)]
    if len(given) != 1:
        raise InvalidFieldError("give the machine once: --sysfs DIR, --lstopo FILE or "
                                "--machine FILE", where="--" + (given[1] if given else "sysfs"))
    if args.devices and not (args.sysfs or args.lstopo):
        raise InvalidFieldError("--devices maps PCI devices of --sysfs or --lstopo; a "
                                "--machine file lists its devices itself", where="--devices")
    if args.machine:
        from numaspec.protocols.node_protocol import decode_machine

        sources["machine"] = args.machine
        raw = _read_json(args.machine)
        try:
            return decode_machine(raw.get("machine", raw) if isinstance(raw, dict) else raw,
                                  where="machine")
        except NumaspecError as exc:
            raise exc.relocated(f"{args.machine}: {exc.where}") from None
    devices = None
    if args.devices:
        from numaspec.operators.importers.sysfs import read_device_map

        devices = read_device_map(args.devices)
    if args.sysfs:
        from numaspec.operators.importers.sysfs import read_sysfs

        sources["machine"] = args.sysfs + _no_numa_folder(args)
        if devices is None and args.state_dir and Path(args.state_dir).is_dir():
            # OPS-15: no --devices: the device checkpoint's PCI addresses, placed by sysfs.
            from numaspec.operators.importers.device_inference import infer_from_state_dir

            inference = infer_from_state_dir(args.sysfs, args.state_dir)
            devices = dict(inference.selectors)
            sources["devices"] = inference.source_line()
        return read_sysfs(args.sysfs, devices=devices)
    from numaspec.operators.importers.hwloc import read_lstopo_xml

    sources["machine"] = args.lstopo
    return read_lstopo_xml(args.lstopo, devices=devices)


def _read_json(path: str) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputFileError(f"cannot read: {exc.strerror or exc}", where=path) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(f"not JSON: {exc.msg} at line {exc.lineno}", where=path) from None


def _the_pod(path: str, name: str | None) -> Any:
    from numaspec.operators.importers.kube_objects import read_pods

    pods = read_pods(path)
    if name is not None:
        pods = [p for p in pods if name in (p.pod.name, p.pod.uid)]
        if not pods:
            raise InputFileError(f"no pod named {name!r}", where=path)
    if len(pods) != 1:
        listed = ", ".join(p.pod.name for p in pods) or "none"
        raise InputFileError(f"holds {len(pods)} pods ({listed}): name one with --name",
                             where=path)
    return pods[0]
