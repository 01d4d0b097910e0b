"""Property tests: generated orchestra.yaml files load back exactly; unknown keys anywhere are located."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from orchestra_adapters.config.orchestra_yaml import load_settings
from orchestra_core.model.settings import PUSH_POLICIES, ConfigError

names = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True)
texts = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\ufeff"),
    min_size=1,
    max_size=20,
)
repos = st.fixed_dictionaries(
    {
        "path": texts,
        "branch_prefix": texts,
        "remote": texts.filter(lambda t: t.strip() and not t.startswith("-")),
        "push": st.sampled_from(PUSH_POLICIES),
        "clone_depth": st.integers(1, 10**6),
    },
    optional={"protected_branches": st.lists(texts, max_size=3), "run_hooks": st.booleans()},
)
agents = st.fixed_dictionaries(
    {},
    optional={
        "role": names,
        "task": names,
        "tools": st.lists(names, max_size=3),
        "model": texts,
        "mode": st.sampled_from(["autonomous", "interactive"]),
    },
)


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    provider = draw(names.filter(lambda n: n != "default"))
    repo_map = draw(st.dictionaries(names, repos, min_size=1, max_size=3))
    tools = {
        repo: draw(st.dictionaries(names, st.fixed_dictionaries({"command": texts, "timeout": st.integers(1, 3600)}), max_size=2))
        for repo in repo_map
    }
    return {
        "providers": {
            "default": provider,
            provider: {"models": draw(st.dictionaries(st.sampled_from(["smart", "worker", "cheap"]), texts)), "max_tokens": draw(st.integers(1, 10**6))},
        },
        "workspace": {"repos": repo_map, "tools": tools},
        "agents": draw(st.dictionaries(names, agents, max_size=3)),
        "prompts": draw(st.lists(texts, max_size=2)),
    }


def dump(document: dict[str, Any]) -> str:
    buffer = io.StringIO()
    YAML().dump(document, buffer)
    return buffer.getvalue()


def write(directory: Path, text: str) -> Path:
    path = directory / "orchestra.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@settings(max_examples=40)
@given(document=documents())
def test_generated_files_load_back_exactly(tmp_path_factory: pytest.TempPathFactory, document: dict[str, Any]) -> None:
    settings = load_settings(write(tmp_path_factory.mktemp("cfg"), dump(document)))
    provider = document["providers"]["default"]
    assert settings.providers.default == provider
    assert dict(settings.providers.entries[provider].models) == document["providers"][provider]["models"]
    for name, repo in document["workspace"]["repos"].items():
        loaded = settings.workspace.repos[name]
        assert (loaded.path, loaded.branch_prefix, loaded.push, loaded.clone_depth) == (
            repo["path"], repo["branch_prefix"], repo["push"], repo["clone_depth"],
        )
        assert loaded.protected_branches == tuple(repo.get("protected_branches", loaded.protected_branches))
    for repo, tools in document["workspace"]["tools"].items():
        for tool, command in tools.items():
            assert settings.workspace.tools[repo][tool].command == command["command"]
            assert settings.workspace.tools[repo][tool].timeout == command["timeout"]
    for name, agent in document["agents"].items():
        assert settings.agents[name].tools == tuple(agent.get("tools", ()))
        assert settings.agents[name].mode == agent.get("mode")
    assert settings.prompts == tuple(document["prompts"])


SECTIONS = [(), ("providers",), ("workspace",), ("workspace", "repos", 0), ("agents", 0), ("storage",)]


@settings(max_examples=40)
@given(document=documents(), section=st.sampled_from(SECTIONS), suffix=st.from_regex(r"[a-z]{3,8}", fullmatch=True))
def test_an_unknown_key_anywhere_is_named_with_its_line(
    tmp_path_factory: pytest.TempPathFactory, document: dict[str, Any], section: tuple[Any, ...], suffix: str
) -> None:
    document.setdefault("storage", {"backend": "sqlite"})
    document["agents"].setdefault("agent", {})
    target, path = document, []
    for step in section:
        key = list(target)[step] if isinstance(step, int) else step
        target, path = target[key], [*path, key]
    unknown = f"zz_{suffix}"
    target[unknown] = 1 if section != ("providers",) else {"modles": {}}
    text = dump(document)
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path_factory.mktemp("cfg"), text))
    expected_key = ".".join([*path, unknown] if section != ("providers",) else ["providers", unknown, "modles"])
    problem = next(p for p in caught.value.problems if p.key == expected_key)
    marker = "modles:" if section == ("providers",) else f"{unknown}:"
    lines = text.splitlines()
    assert problem.line == next(number for number, line in enumerate(lines, 1) if line.strip().startswith(marker))
    assert "unknown key" in problem.detail
