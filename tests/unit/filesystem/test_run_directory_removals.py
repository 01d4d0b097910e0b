"""FileRunDirectory removes a stage file wherever it may exist: one it wrote, one in a directory it handed out,
and any in a run directory that held files before it opened (a resumed run's); not in a new one."""

from __future__ import annotations

from pathlib import Path

from orchestra_adapters.filesystem.run_directory import FileRunDirectory


def test_a_stale_status_file_of_an_earlier_run_is_removed(tmp_path: Path) -> None:
    stale = tmp_path / "logs" / "plan" / "status.json"
    stale.parent.mkdir(parents=True)
    stale.write_text('{"outcome": "success"}')
    directory = FileRunDirectory(str(tmp_path / "logs"))
    directory.remove_stage_file("plan", "status.json")
    assert not stale.exists()
    assert directory.read_stage_file("plan", "status.json") is None
    directory.close()


def test_a_file_written_in_a_new_run_directory_is_removed(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()  # `run` checks that it can make the directory before the run starts
    directory = FileRunDirectory(str(tmp_path / "logs"))
    directory.write_stage_file("plan", "status.json", "{}")
    directory.remove_stage_file("plan", "status.json")
    directory.close()
    assert not (tmp_path / "logs" / "plan" / "status.json").exists()


def test_a_file_a_command_wrote_in_a_handed_out_directory_is_removed(tmp_path: Path) -> None:
    directory = FileRunDirectory(str(tmp_path / "logs"))
    written = Path(directory.stage_dir("check")) / "status.json"
    written.write_text("{}")
    directory.remove_stage_file("check", "status.json")
    assert not written.exists()
    directory.close()


def test_a_new_round_of_a_loop_restart_starts_empty_and_removes_what_it_wrote(tmp_path: Path) -> None:
    directory = FileRunDirectory(str(tmp_path / "logs"))
    directory.write_stage_file("plan", "status.json", "{}")
    directory.start_round(1)
    directory.write_stage_file("plan", "status.json", "{}")
    directory.remove_stage_file("plan", "status.json")
    directory.close()
    assert (tmp_path / "logs" / "plan" / "status.json").exists()
    assert not (tmp_path / "logs" / "restart-1" / "plan" / "status.json").exists()
