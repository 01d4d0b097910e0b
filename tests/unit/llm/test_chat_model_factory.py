"""LangChainChatModelFactory and check_providers: provider kinds, keys, extras, aliases and the scripted provider."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.llm.chat_model_factory import LangChainChatModelFactory
from orchestra_adapters.llm.scripted import ScriptedChatModel
from orchestra_core.model.settings import OrchestraSettings, ProviderSettings, ProvidersSettings
from orchestra_core.ports.chat_models import ChatModelFactory, ProviderConfigError

ROOT = Path(__file__).resolve().parents[3]


class FakeChatModel:
    """Stands in for a provider's chat model class; keeps the constructor arguments."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend the three provider packages are installed."""
    for module, class_name in (
        ("langchain_anthropic", "ChatAnthropic"),
        ("langchain_openai", "ChatOpenAI"),
        ("langchain_ollama", "ChatOllama"),
    ):
        fake = types.ModuleType(module)
        setattr(fake, class_name, FakeChatModel)
        fake.__spec__ = types.SimpleNamespace(name=module)  # type: ignore[assignment]
        monkeypatch.setitem(sys.modules, module, fake)


@pytest.fixture
def not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the provider packages unimportable, whatever this machine has."""
    for module in ("langchain_anthropic", "langchain_openai", "langchain_ollama"):
        monkeypatch.setitem(sys.modules, module, None)


def _settings(
    tmp_path: Path | None = None, default: str | None = None, **entries: ProviderSettings
) -> OrchestraSettings:
    source = tmp_path / "orchestra.yaml" if tmp_path else None
    return OrchestraSettings(providers=ProvidersSettings(default, entries), source_path=source)


ANTHROPIC = ProviderSettings(
    models={"smart": "claude-opus-4", "worker": "claude-sonnet-4", "cheap": "claude-haiku"}, max_tokens=8192
)


def test_factory_satisfies_the_port() -> None:
    assert isinstance(LangChainChatModelFactory(_settings()), ChatModelFactory)


@pytest.mark.usefixtures("installed")
def test_anthropic_gets_the_resolved_alias_key_and_max_tokens() -> None:
    factory = LangChainChatModelFactory(
        _settings(default="anthropic", anthropic=ANTHROPIC), {"ANTHROPIC_API_KEY": "sk-a"}
    )
    model = factory.create("", "smart", node_id="plan")
    assert model.kwargs == {"model": "claude-opus-4", "api_key": "sk-a", "max_tokens": 8192}
    assert factory.create("anthropic", "claude-literal-1").kwargs["model"] == "claude-literal-1"
    assert factory.create("anthropic", "", purpose="commit_message").kwargs["model"] == "claude-haiku"
    assert factory.create("anthropic", "").kwargs["model"] == "claude-sonnet-4"


@pytest.mark.usefixtures("installed")
def test_openai_compatible_entries_use_api_base_and_optional_keys() -> None:
    settings = _settings(
        local=ProviderSettings(api_base="http://127.0.0.1:8080/v1", models={"worker": "qwen2.5-coder"}),
        openrouter=ProviderSettings(api_base="https://openrouter.ai/api/v1", api_key_env="OPENROUTER_KEY"),
    )
    factory = LangChainChatModelFactory(settings, {"OPENROUTER_KEY": "sk-or"})
    local = factory.create("local", "worker")
    assert local.kwargs == {
        "model": "qwen2.5-coder",
        "api_key": "not-needed",
        "base_url": "http://127.0.0.1:8080/v1",
        "stream_usage": True,  # a streamed reply reports its tokens
    }
    assert factory.create("openrouter", "anthropic/claude-sonnet-4").kwargs["api_key"] == "sk-or"
    with_key = LangChainChatModelFactory(settings, {"LOCAL_API_KEY": "k", "OPENROUTER_KEY": "x"})
    assert with_key.create("local", "m").kwargs["api_key"] == "k"


@pytest.mark.usefixtures("installed")
def test_openai_and_ollama_arguments() -> None:
    settings = _settings(ollama=ProviderSettings(api_base="http://gpu:11434", max_tokens=512))
    factory = LangChainChatModelFactory(settings, {"OPENAI_API_KEY": "sk-o"})
    assert factory.create("openai", "gpt-4o").kwargs == {"model": "gpt-4o", "api_key": "sk-o", "stream_usage": True}
    assert factory.create("ollama", "llama3.1").kwargs == {
        "model": "llama3.1",
        "base_url": "http://gpu:11434",
        "num_predict": 512,
    }


@pytest.mark.usefixtures("installed")
@pytest.mark.parametrize(
    ("provider", "settings", "variable"),
    [
        ("anthropic", ProviderSettings(), "ANTHROPIC_API_KEY"),
        ("openai", ProviderSettings(), "OPENAI_API_KEY"),
        ("openai", ProviderSettings(api_key_env="TEAM_OPENAI_KEY"), "TEAM_OPENAI_KEY"),
        (
            "openrouter",
            ProviderSettings(api_base="https://openrouter.ai/api/v1", api_key_env="OR_KEY"),
            "OR_KEY",
        ),
    ],
)
def test_missing_key_names_the_environment_variable(
    provider: str, settings: ProviderSettings, variable: str
) -> None:
    factory = LangChainChatModelFactory(_settings(**{provider: settings}), {})
    with pytest.raises(
        ProviderConfigError,
        match=f"provider '{provider}' needs an API key: set the environment variable {variable}$",
    ):
        factory.create(provider, "m")


@pytest.mark.usefixtures("not_installed")
@pytest.mark.parametrize(
    ("provider", "package", "extra"),
    [
        ("anthropic", "langchain-anthropic", "anthropic"),
        ("openai", "langchain-openai", "openai"),
        ("vllm", "langchain-openai", "openai"),
        ("ollama", "langchain-ollama", "ollama"),
    ],
)
def test_missing_package_names_the_pip_extra(provider: str, package: str, extra: str) -> None:
    settings = _settings(vllm=ProviderSettings(api_base="http://localhost:8000/v1"))
    factory = LangChainChatModelFactory(settings, {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})
    with pytest.raises(
        ProviderConfigError, match=rf"needs the {package} package: pip install 'orchestra\[{extra}\]'"
    ):
        factory.create(provider, "m")


def test_unknown_and_unchosen_providers() -> None:
    factory = LangChainChatModelFactory(_settings(half=ProviderSettings(models={"smart": "x"})), {})
    with pytest.raises(
        ProviderConfigError,
        match=r"unknown provider 'mystery' \(known: anthropic, half, ollama, openai, scripted\)",
    ):
        factory.create("mystery", "m")
    with pytest.raises(ProviderConfigError, match=r"providers\.half needs an api_base"):
        factory.create("half", "smart")
    with pytest.raises(ProviderConfigError, match=r"no provider chosen: set providers\.default"):
        factory.create("", "m")
    with pytest.raises(ValueError, match="unknown chat model purpose"):
        factory.create("scripted", "m", purpose="poetry")  # type: ignore[arg-type]


def test_missing_default_alias_is_an_error(tmp_path: Path) -> None:
    factory = LangChainChatModelFactory(
        _settings(openai=ProviderSettings(models={"smart": "gpt-4o"})), {"OPENAI_API_KEY": "k"}
    )
    with pytest.raises(
        ProviderConfigError, match=r"no model given and providers\.openai\.models\.cheap is not set"
    ):
        factory.create("openai", "", purpose="commit_message")


def _cassette(tmp_path: Path, text: str) -> None:
    (tmp_path / "cassette.yaml").write_text(text, encoding="utf-8")


def test_scripted_models_share_the_run_cassette_relative_to_orchestra_yaml(tmp_path: Path) -> None:
    _cassette(tmp_path, "nodes:\n  a: [one, two]\ncommit_messages: [msg]\n")
    settings = _settings(tmp_path, default="scripted", scripted=ProviderSettings(cassette="cassette.yaml"))
    factory = LangChainChatModelFactory(settings, {})
    first = factory.create("", "", node_id="a")
    assert isinstance(first, ScriptedChatModel) and first.model_name == "scripted"
    assert first.invoke("x").content == "one"
    second = factory.create("scripted", "worker", node_id="a")
    assert second.model_name == "scripted"  # unmapped tier aliases of the scripted provider
    assert second.invoke("x").content == "two"
    assert factory.create("scripted", "my-literal-model").model_name == "my-literal-model"
    assert (
        factory.create("scripted", "cheap", purpose="commit_message", node_id="a").invoke("d").content
        == "msg"
    )
    fresh_run = LangChainChatModelFactory(settings, {})
    assert fresh_run.create("scripted", "", node_id="a").invoke("x").content == "one"


def test_any_entry_with_a_cassette_is_scripted(tmp_path: Path) -> None:
    _cassette(tmp_path, "default: hi\n")
    settings = _settings(
        tmp_path, offline=ProviderSettings(cassette="cassette.yaml", models={"smart": "fake-opus"})
    )
    model = LangChainChatModelFactory(settings, {}).create("offline", "smart")
    assert isinstance(model, ScriptedChatModel) and model.model_name == "fake-opus"


def test_scripted_without_cassette_or_with_a_bad_one(tmp_path: Path) -> None:
    with pytest.raises(ProviderConfigError, match=r"providers\.scripted\.cassette is not set"):
        LangChainChatModelFactory(_settings(tmp_path), {}).create("scripted", "")
    _cassette(tmp_path, "nodes:\n  a: 3\n")
    settings = _settings(tmp_path, scripted=ProviderSettings(cassette="cassette.yaml"))
    with pytest.raises(ProviderConfigError, match=r"cassette.yaml:2: nodes.a: expected a list"):
        LangChainChatModelFactory(settings, {}).create("scripted", "")


def test_check_providers_lists_every_problem_at_once(tmp_path: Path, not_installed: None) -> None:
    from orchestra_adapters.llm.providers import check_providers, provider_problems

    settings = _settings(tmp_path, default="anthropic", scripted=ProviderSettings(cassette="missing.yaml"))
    with pytest.raises(ProviderConfigError) as caught:
        check_providers(settings, ["", "anthropic", "scripted", "nowhere"], environ={})
    message = str(caught.value)
    assert "pip install 'orchestra[anthropic]'" in message
    assert "set the environment variable ANTHROPIC_API_KEY" in message
    assert "missing.yaml: cannot read the cassette" in message
    assert "unknown provider 'nowhere'" in message
    assert message.count("ANTHROPIC_API_KEY") == 1  # "" and "anthropic" are the same provider once resolved
    assert len(provider_problems(settings, ["anthropic"], {})) == 2


def test_check_providers_passes_when_everything_is_there(
    tmp_path: Path, installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestra_adapters.llm.providers import check_providers

    _cassette(tmp_path, "default: ok\n")
    settings = _settings(tmp_path, default="scripted", scripted=ProviderSettings(cassette="cassette.yaml"))
    check_providers(settings, ["", "scripted", "anthropic", "ollama"], environ={"ANTHROPIC_API_KEY": "k"})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    check_providers(settings, ["anthropic"])  # the process environment by default


def test_importing_the_factory_loads_no_langchain() -> None:
    code = (
        "import sys, orchestra_adapters.llm.chat_model_factory, orchestra_adapters.llm.providers, "
        "orchestra_adapters.backends.registry\n"
        "print(sorted(m for m in sys.modules if m.startswith(('langchain', 'langgraph'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "[]"
