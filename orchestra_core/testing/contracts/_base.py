"""The base of every port contract: a temporary directory, cleanups, optional capabilities and cases."""

from __future__ import annotations

import functools
import re
import shutil
import tempfile
import unittest
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

_Test = TypeVar("_Test", bound=Callable[..., None])
_Error = TypeVar("_Error", bound=BaseException)


class Raised(Generic[_Error]):
    """What `raises` caught; `value` is set once the block has raised."""

    value: _Error


@contextmanager
def raises(kind: type[_Error], match: str | None = None) -> Iterator[Raised[_Error]]:
    """Assert that the block raises `kind` (whose message matches the regular expression `match`)."""
    caught: Raised[_Error] = Raised()
    try:
        yield caught
    except kind as error:
        if match is not None and not re.search(match, str(error)):
            raise AssertionError(
                f"{type(error).__name__}({str(error)!r}) does not match {match!r}"
            ) from error
        caught.value = error
    else:
        raise AssertionError(f"expected {kind.__name__} to be raised")


def requires(capability: str) -> Callable[[_Test], _Test]:
    """Mark a test as one of an optional capability: it is skipped unless the runner claims it."""

    def decorate(test: _Test) -> _Test:
        @functools.wraps(test)
        def run(self: PortContract, *args: Any) -> None:
            self.require(capability)
            test(self, *args)

        run.required_capability = capability  # type: ignore[attr-defined]
        return run  # type: ignore[return-value]

    return decorate


def cases(**named: tuple[Any, ...]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Run a test once per case: `test_x` with `cases(a=(1, 2))` becomes `test_x__a`, called with (1, 2).

    The contracts cannot use `pytest.mark.parametrize`; each case is still a test of its own.
    """

    def decorate(test: Callable[..., None]) -> Callable[..., None]:
        test.contract_cases = named  # type: ignore[attr-defined]
        return test

    return decorate


class PortContract:
    """What every contract shares; a runner subclasses a contract and implements its factory methods.

    pytest runs a subclass named `Test...` as it runs any test class: `setup_method` before each test,
    `teardown_method` after it. Tests of optional capabilities raise `unittest.SkipTest` unless the
    runner lists the capability in `capabilities`.

    Attributes:
        OPTIONAL_CAPABILITIES: The port's optional capabilities (set by the contract).
        capabilities: The optional capabilities the adapter under test claims (set by the runner).
        tmp: A fresh temporary directory for each test, removed afterwards.
    """

    OPTIONAL_CAPABILITIES: ClassVar[frozenset[str]] = frozenset()
    capabilities: ClassVar[frozenset[str]] = frozenset()
    tmp: Path

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        unknown = set(cls.capabilities) - set(cls.OPTIONAL_CAPABILITIES)
        if unknown:
            raise TypeError(
                f"{cls.__name__} claims unknown capabilities {sorted(unknown)}; "
                f"the port's optional capabilities are {sorted(cls.OPTIONAL_CAPABILITIES)}"
            )
        for name, test in list(vars(cls).items()):
            named = getattr(test, "contract_cases", None)
            if named is None:
                continue
            delattr(cls, name)
            for case, arguments in named.items():
                setattr(cls, f"{name}__{case}", _case(test, f"{name}__{case}", arguments))

    def setup_method(self, method: object = None) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="orchestra-contract-")).resolve()
        self._cleanups: list[Callable[[], object]] = []

    def teardown_method(self, method: object = None) -> None:
        try:
            while self._cleanups:
                self._cleanups.pop()()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def add_cleanup(self, cleanup: Callable[[], object]) -> None:
        """Call `cleanup` after the test (the last added first), whether it passed or not."""
        self._cleanups.append(cleanup)

    def require(self, capability: str) -> None:
        """Skip the running test unless the runner claims `capability`."""
        if capability not in self.OPTIONAL_CAPABILITIES:
            raise ValueError(f"{capability!r} is not an optional capability of {type(self).__name__}")
        if capability not in self.capabilities:
            raise unittest.SkipTest(f"{type(self).__name__} does not claim the optional {capability!r}")


def _case(test: Callable[..., None], name: str, arguments: tuple[Any, ...]) -> Callable[..., None]:
    def run(self: PortContract) -> None:
        test(self, *arguments)

    # Not functools.wraps: pytest would read the wrapped signature and look for fixtures named like its arguments.
    run.__name__ = name
    run.__qualname__ = f"{test.__qualname__.rpartition('.')[0]}.{name}"
    run.__doc__ = test.__doc__
    run.__module__ = test.__module__
    return run
