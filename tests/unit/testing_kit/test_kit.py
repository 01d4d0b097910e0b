"""The shipped test kit: its names resolve, it loads lazily, and nothing in it needs pytest."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import unittest
from pathlib import Path

import pytest

import orchestra_core.testing
import orchestra_core.testing.contracts
from orchestra_core.testing.contracts import PortContract, SessionLocksContract, cases, requires

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("package", [orchestra_core.testing, orchestra_core.testing.contracts])
def test_every_exported_name_resolves(package: object) -> None:
    for name in package.__all__:  # type: ignore[attr-defined]
        assert getattr(package, name).__name__ == name
    with pytest.raises(AttributeError):
        package.NoSuchFake  # type: ignore[attr-defined]  # noqa: B018


def test_the_recording_interviewer_is_the_interview_packages() -> None:
    from orchestra_core.interview import RecordingInterviewer

    assert orchestra_core.testing.RecordingInterviewer is RecordingInterviewer


def _imported_after(code: str) -> set[str]:
    process = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\nprint('\\n'.join(sys.modules))"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(process.stdout.split())


def test_importing_the_kit_loads_no_fake() -> None:
    loaded = _imported_after("import orchestra_core.testing, orchestra_core.testing.contracts")
    assert not {name for name in loaded if name.startswith("orchestra_core.testing.")} - {
        "orchestra_core.testing.contracts"
    }


def test_no_contract_or_fake_imports_pytest() -> None:
    modules = [
        info.name
        for package in (orchestra_core.testing, orchestra_core.testing.contracts)
        for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}.")
    ]
    loaded = _imported_after("\n".join(f"import {module}" for module in modules))
    assert set(modules) <= loaded
    assert not {name for name in loaded if name.split(".")[0] in ("pytest", "_pytest")}


def test_contracts_are_not_collected_as_tests_themselves() -> None:
    for name in orchestra_core.testing.contracts.__all__:
        contract = getattr(orchestra_core.testing.contracts, name)
        if isinstance(contract, type):
            assert issubclass(contract, PortContract) and not name.startswith("Test")
            importlib.import_module(contract.__module__)


def test_claiming_an_unknown_capability_is_refused() -> None:
    with pytest.raises(TypeError, match="claims unknown capabilities \\['holder_deaths'\\]"):
        type("TestTypo", (SessionLocksContract,), {"capabilities": frozenset({"holder_deaths"})})


def test_cases_become_tests_and_unclaimed_capabilities_skip() -> None:
    seen: list[int] = []

    class Contract(PortContract):
        OPTIONAL_CAPABILITIES = frozenset({"flying"})

        @cases(one=(1,), two=(2,))
        def test_number(self, number: int) -> None:
            seen.append(number)

        @requires("flying")
        def test_flight(self) -> None:
            seen.append(0)

    class Grounded(Contract):
        pass

    class Flying(Contract):
        capabilities = frozenset({"flying"})

    assert not hasattr(Contract, "test_number") and Contract.test_number__two.__name__ == "test_number__two"
    Grounded().test_number__one()
    Grounded().test_number__two()
    with pytest.raises(unittest.SkipTest, match="Grounded does not claim the optional 'flying'"):
        Grounded().test_flight()
    Flying().test_flight()
    assert seen == [1, 2, 0]
