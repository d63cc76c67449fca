"""What an operator's pod file suggests against what it is (spec chapter ``operators.md``,
OPS-14): a pod written to be Guaranteed but read as Burstable, as a file cut off inside a
container's resources reads, is warned about, since kubelet then gives it no exclusive CPUs and
the Memory Manager no NUMA placement (QOS-1, CPU-1, MEM-1)."""

from __future__ import annotations

from numaspec.node.pods import QOS_RESOURCES, Container, Pod, QOSClass, qos_class

__all__ = ["qos_warnings"]


def _shy_of_guaranteed(container: Container) -> list[str]:
    """What keeps one container from the Guaranteed shape: a cpu or memory limit missing, or
    a request unlike its limit."""
    out = []
    for name in QOS_RESOURCES:
        limit, request = container.limits.get(name), container.requests.get(name)
        if not limit:
            out.append(f"no {name} limit")
        elif request is not None and request != limit:
            out.append(f"{name} request unlike its limit")
    return out


def _wants_guaranteed(container: Container) -> bool:
    """A container that sets a cpu or memory limit equal to its request."""
    return any(container.limits.get(name) and container.requests.get(name)
               == container.limits.get(name) for name in QOS_RESOURCES)


def qos_warnings(pod: Pod) -> list[str]:
    """OPS-14: a warning when the pod is not Guaranteed though some container is written as a
    Guaranteed one is (a limit equal to its request), naming what each container lacks."""
    if pod.resources is not None or qos_class(pod) is not QOSClass.BURSTABLE:
        return []
    containers = (*pod.init_containers, *pod.containers)
    if not any(_wants_guaranteed(c) for c in containers):
        return []
    lacking = [f"container {c.name}: {', '.join(shy)}" for c in containers
               if (shy := _shy_of_guaranteed(c))]
    return [f"the pod is Burstable, not Guaranteed, though it sets limits equal to requests "
            f"({'; '.join(lacking)}): kubelet gives a Burstable pod no exclusive CPUs and no "
            "Memory Manager placement; if the file was cut short, give it whole"]
