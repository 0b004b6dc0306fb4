"""Dump folder naming, grouping into compilation sequences, stage choice and pairing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers.dumps import (
    group_by_module,
    pair_names,
    parse_dump_name,
    pick_stage,
    scan_folder,
)

JAX = Path(__file__).resolve().parent.parent / "fixtures" / "hlo" / "jax"

TF_LONG = (
    "1646136118794537.module_4922.cluster_0__XlaCompiledKernel_true__XlaNumConstantArgs_0_.566"
    ".sm_8.0_gpu_after_optimizations.txt"
)


@pytest.mark.parametrize(
    ("filename", "expected"),
    [
        (
            "module_0000.jit_mlp.before_optimizations.txt",
            (0, "jit_mlp", "before_optimizations", None),
        ),
        (
            "module_0002.jit_mlp.cpu_after_optimizations.txt",
            (2, "jit_mlp", "cpu_after_optimizations", None),
        ),
        (
            TF_LONG,
            (
                4922,
                "cluster_0__XlaCompiledKernel_true__XlaNumConstantArgs_0_.566",
                "sm_8.0_gpu_after_optimizations",
                1646136118794537,
            ),
        ),
        (
            "module_0002.jit_f.after_optimizations_before_buffer_assignment.txt",
            (2, "jit_f", "after_optimizations_before_buffer_assignment", None),
        ),
        (
            "module_12345.a_inference_f_13__.9.before_optimizations.txt",
            (12345, "a_inference_f_13__.9", "before_optimizations", None),
        ),
        (
            "module_0001.jit_f.0003.cpu-pipeline.after_pipeline-start.before_simplify.txt",
            (1, "jit_f", "0003.cpu-pipeline.after_pipeline-start.before_simplify", None),
        ),
        (
            "module_0003.jit_f.cl_123.before_optimizations.txt",
            (3, "jit_f", "before_optimizations", None),
        ),
        ("module_0003.before_optimizations.txt", (3, None, "before_optimizations", None)),
        (
            "module_0002.jit_f.gfx950_gpu_after_optimizations.txt",
            (2, "jit_f", "gfx950_gpu_after_optimizations", None),
        ),
    ],
)
def test_every_xla_dump_name_form_is_recognised(
    filename: str, expected: tuple[object, ...]
) -> None:
    assert parse_dump_name(filename) == expected


@pytest.mark.parametrize(
    "filename",
    [
        "module_0001.jit_f.debug_options",
        "module_0001.jit_f.ir-no-opt.ll",
        "module_0001.jit_f.obj-file.fusion_kernel_module.o",
        "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt",
        "module_0001.jit_f.cpu_after_optimizations-memory-usage-report.txt",
        "module_0001.jit_f.cpu_after_optimizations-live-range.txt",
        "module_0001.jit_f.cpu_after_optimizations-buffer-assignment-values.txt",
        "module_0001.jit_f.thunk_sequence.txt",
        "module_0001.jit_f.before_optimizations.hlo.pb",
        "module_0001.jit_f.before_optimizations.dot",
        "notes.txt",
    ],
)
def test_everything_else_in_a_dump_folder_is_ignored(filename: str) -> None:
    assert parse_dump_name(filename) is None


def test_a_real_folder_groups_compilations_of_one_module_in_id_order(tmp_path: Path) -> None:
    # GIVEN the batch-size capture plus the junk XLA writes next to it
    for p in (JAX / "batch_size" / "dumps").iterdir():
        shutil.copy(p, tmp_path / p.name)
    (tmp_path / "module_0000.jit_mlp.debug_options").write_text("xla_dump_to: x\n")
    (tmp_path / "module_0000.jit_mlp").mkdir()
    # WHEN grouped
    groups = group_by_module(scan_folder(tmp_path))
    # THEN one module with two compilations at the default stage, in id order
    assert list(groups) == ["jit_mlp"]
    assert [f.module_id for f in groups["jit_mlp"]] == [0, 2]
    assert {f.stage for f in groups["jit_mlp"]} == {"before_optimizations"}
    cpu = group_by_module(scan_folder(tmp_path), "cpu_after_optimizations")
    assert [f.stage for f in cpu["jit_mlp"]] == ["cpu_after_optimizations"] * 2


def test_ids_order_numerically_past_four_digits(tmp_path: Path) -> None:
    src = next((JAX / "stable" / "run1").glob("*before_optimizations.txt")).read_text()
    for mid in ("9999", "10000"):
        (tmp_path / f"module_{mid}.jit_mlp.before_optimizations.txt").write_text(src)
    assert [f.module_id for f in group_by_module(scan_folder(tmp_path))["jit_mlp"]] == [9999, 10000]


def test_stage_falls_back_to_the_only_stage_present(tmp_path: Path) -> None:
    src = next((JAX / "stable" / "run1").glob("*cpu_after_optimizations.txt")).read_text()
    (tmp_path / "module_0001.jit_mlp.cpu_after_optimizations.txt").write_text(src)
    files = scan_folder(tmp_path)
    assert pick_stage(files) == "cpu_after_optimizations"
    assert list(group_by_module(files)) == ["jit_mlp"]


def test_a_name_dropped_from_the_file_name_comes_from_the_module_header(tmp_path: Path) -> None:
    src = next((JAX / "stable" / "run1").glob("*before_optimizations.txt")).read_text()
    (tmp_path / "module_0007.before_optimizations.txt").write_text(src)
    assert [f.name for f in scan_folder(tmp_path)] == ["jit_mlp"]


def test_two_runs_pair_by_module_name_not_by_counter() -> None:
    a = group_by_module(scan_folder(JAX / "batch_size" / "dumps"))
    b = group_by_module(scan_folder(JAX / "stable" / "run1"))
    assert pair_names(a, b) == (["jit_mlp"], [], [])


def test_missing_folder_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(RecompileDoctorError, match="no such directory"):
        scan_folder(tmp_path / "nope")
