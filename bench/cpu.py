"""CPU seconds used by groups of processes, from Linux's /proc (benchmarks only).

A benchmark on a 2-core machine is bounded by CPU: which process spends it
says what to make cheaper. Elsewhere than Linux the figures are empty.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _processes() -> dict[int, tuple[int, str, float]]:
    """pid -> (parent pid, command name, CPU seconds so far) of every process we can read."""
    found = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            raw = (entry / "stat").read_text()
        except OSError:
            continue  # gone, or not ours to read
        # The command name is in parentheses and may hold spaces: split after its closing one.
        name = raw[raw.index("(") + 1 : raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2 :].split()
        # fields[1] is the parent pid; fields[11:13] are user and system ticks.
        found[int(entry.name)] = (int(fields[1]), name, (int(fields[11]) + int(fields[12])) / _TICKS)
    return found


def tree_cpu(roots: Iterable[int]) -> float:
    """CPU seconds of ``roots`` and their live descendants."""
    table = _processes()
    wanted = set(roots)
    grew = True
    while grew:
        more = {pid for pid, (parent, _, _) in table.items() if parent in wanted and pid not in wanted}
        wanted |= more
        grew = bool(more)
    return sum(table[pid][2] for pid in wanted if pid in table)


def named_cpu(match: Callable[[str], bool]) -> float:
    """CPU seconds of every live process whose command name ``match`` accepts (e.g. the database)."""
    return sum(cpu for _, name, cpu in _processes().values() if match(name))


def is_database(name: str) -> bool:
    """Whether a process of this command name is PostgreSQL's (the server or a backend)."""
    return name.startswith("postgres")
