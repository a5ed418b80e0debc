"""The machine facts each bench run records (so a drifting re-run can be told from one on another host)."""

from __future__ import annotations

import json

import torch

from botgrpo_bench.machine import machine_facts, machine_note


def test_machine_facts_name_the_kernels_torch_uses_here() -> None:
    facts = machine_facts()
    assert set(facts) == {"cpu", "cores", "torch", "cpu_capability", "torch_threads", "python", "boot_id"}
    assert facts["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert facts["torch"] == torch.__version__ and facts["torch_threads"] == torch.get_num_threads()
    assert json.loads(json.dumps(facts)) == facts  # it goes into bench_result.json and runs.jsonl as is
    assert facts == machine_facts()  # stable within one boot: two runs here compare as the same host


def test_machine_note_is_one_line_with_the_cpu_and_its_kernels() -> None:
    note = machine_note()
    facts = machine_facts()
    assert "\n" not in note and facts["cpu"] in note and facts["cpu_capability"] in note
