"""Settings from orchestra.yaml as frozen attrs classes (loading lives in orchestra_adapters.config).

Field names are the YAML keys. Paths are kept as written; `OrchestraSettings.base_dir` is the directory
relative paths are resolved against (the directory of the orchestra.yaml they came from).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Literal, NewType, get_args

from attrs import field, frozen

from orchestra_core.model.budget import Budget
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.immutable import frozen_map, str_tuple
from orchestra_core.model.money import Money
from orchestra_core.model.pricing import ModelPrice

ALIASES = ("smart", "worker", "cheap")
# Provider names that need no entry in `providers:` (their kind is known by name; `scripted` needs a cassette).
BUILTIN_PROVIDERS = ("anthropic", "openai", "ollama", "scripted")
PushPolicy = Literal["never", "on_completion", "on_checkpoint"]
IsolationMode = Literal["worktree", "in_place"]
RollbackPolicy = Literal["never", "on_failure"]
StorageBackend = Literal["sqlite", "cxdb", "postgres"]
AgentMode = Literal["autonomous", "interactive"]
SandboxKind = Literal["none", "bubblewrap"]
BranchDispatch = Literal["fleet", "local"]
NotifyEventName = Literal["finished", "failed", "needs_input", "budget_exceeded", "cancelled", "interrupted"]
NotifyFormat = Literal["json", "slack"]
PUSH_POLICIES: tuple[str, ...] = get_args(PushPolicy)
ISOLATION_MODES: tuple[str, ...] = get_args(IsolationMode)
STORAGE_BACKENDS: tuple[str, ...] = get_args(StorageBackend)
AGENT_MODES: tuple[str, ...] = get_args(AgentMode)
SANDBOX_KINDS: tuple[str, ...] = get_args(SandboxKind)
NOTIFY_EVENT_NAMES: tuple[str, ...] = get_args(NotifyEventName)  # the values of model.notifications.NotifyEvent
IMPLICIT_REPO = "project"  # the one repo tools see when workspace.repos is empty (the project root)

# Seconds; orchestra.yaml accepts a number of seconds or a duration string such as "90s", "10m".
Seconds = NewType("Seconds", float)
# US dollars greater than zero (a budget), and whole numbers of 1 or more (a token budget).
PositiveDollars = NewType("PositiveDollars", Decimal)
PositiveCount = NewType("PositiveCount", int)



@frozen
class ConfigProblem:
    """One thing wrong in a configuration file: where it is and what is wrong."""

    detail: str
    file: str | None = None
    line: int | None = None
    key: str | None = None

    def render(self) -> str:
        """`file:line: key: detail`, leaving out the parts that are unknown."""
        where = self.file or ""
        if self.file and self.line is not None:
            where = f"{where}:{self.line}"
        parts = [part for part in (where, self.key) if part]
        return ": ".join([*parts, self.detail])


class ConfigError(OrchestraError):
    """A configuration file (orchestra.yaml, a prompt layer file) is unreadable or invalid.

    Attributes:
        problems: Every problem found, in file order; the message has one line per problem.
    """

    def __init__(self, problems: ConfigProblem | Sequence[ConfigProblem]) -> None:
        listed = [problems] if isinstance(problems, ConfigProblem) else list(problems)
        if not listed:
            raise ValueError("ConfigError needs at least one problem")
        self.problems: tuple[ConfigProblem, ...] = tuple(listed)
        super().__init__("\n".join(problem.render() for problem in self.problems))

    @classmethod
    def at(cls, detail: str, *, file: str | None = None, line: int | None = None, key: str | None = None) -> ConfigError:
        """A ConfigError with a single problem."""
        return cls(ConfigProblem(detail, file, line, key))

    @property
    def file(self) -> str | None:
        return self.problems[0].file

    @property
    def line(self) -> int | None:
        return self.problems[0].line

    @property
    def key(self) -> str | None:
        return self.problems[0].key

    @property
    def detail(self) -> str:
        return self.problems[0].detail


def _fallback_tables(value: Mapping[str, Sequence[str]] | None) -> Mapping[str, tuple[str, ...]]:
    return frozen_map({alias: str_tuple(fallbacks) for alias, fallbacks in (value or {}).items()})


@frozen
class ProviderSettings:
    """One provider: its alias table (smart/worker/cheap -> model) and connection options.

    `fallbacks` holds, by alias, the models the alias falls back to (YAML: `models.<alias>: {model: ...,
    fallbacks: [...]}`), as written: `model`, `alias`, `provider:model` or `provider:alias` (see
    `orchestra_core.agents.fallbacks`). An alias without fallbacks is absent.
    """

    models: Mapping[str, str] = field(factory=dict, converter=frozen_map)
    api_base: str | None = None
    api_key_env: str | None = None
    max_tokens: int | None = None
    cassette: str | None = None  # scripted provider only: the cassette file, relative to orchestra.yaml
    fallbacks: Mapping[str, tuple[str, ...]] = field(factory=dict, converter=_fallback_tables)


@frozen
class ProvidersSettings:
    """`providers:`: the default provider name and each provider's settings (the other keys)."""

    default: str | None = None
    entries: Mapping[str, ProviderSettings] = field(factory=dict, converter=frozen_map)


@frozen
class RepoSettings:
    """`workspace.repos.<name>`."""

    path: str
    branch_prefix: str = "orchestra/"
    base_ref: str = "HEAD"
    remote: str | None = None
    push: PushPolicy | None = None
    clone_depth: int | None = None
    protected_branches: tuple[str, ...] = field(default=("main", "master", "release/*"), converter=str_tuple)
    isolation: IsolationMode = "worktree"
    run_hooks: bool = False


@frozen
class ToolParameterSettings:
    """`workspace.tools.<repo>.<tool>.parameters.<name>`: an argument the model may pass to a command.

    The command text names it as `{name}`; the model's value is shell-quoted before substitution.
    A parameter without a default is required.
    """

    description: str = ""
    default: str | None = None


@frozen
class ToolCommandSettings:
    """`workspace.tools.<repo>.<tool>`: a shell command offered to agents as a tool."""

    command: str
    description: str = ""
    timeout: Seconds | None = None
    parameters: Mapping[str, ToolParameterSettings] = field(factory=dict, converter=frozen_map)


def _tool_tables(
    value: Mapping[str, Mapping[str, ToolCommandSettings]] | None,
) -> Mapping[str, Mapping[str, ToolCommandSettings]]:
    return frozen_map({repo: frozen_map(t) for repo, t in (value or {}).items()})


@frozen
class WorkspaceSettings:
    """`workspace:`; `rollback: on_failure` undoes a failed run's branches and worktrees (docs/git.md)."""

    repos: Mapping[str, RepoSettings] = field(factory=dict, converter=frozen_map)
    tools: Mapping[str, Mapping[str, ToolCommandSettings]] = field(factory=dict, converter=_tool_tables)
    rollback: RollbackPolicy = "never"

    def repo_names(self) -> tuple[str, ...]:
        """The configured repos, or the implicit `project` repo when there are none."""
        return tuple(self.repos) or (IMPLICIT_REPO,)


@frozen
class AgentSettings:
    """`agents.<name>`: prompt layers, tools and model choices for nodes that reference the agent."""

    role: str | None = None
    persona: str | None = None
    personality: str | None = None
    task: str | None = None
    tools: tuple[str, ...] = field(default=(), converter=str_tuple)
    disallowed_tools: tuple[str, ...] = field(default=(), converter=str_tuple)
    model: str | None = None
    provider: str | None = None
    mode: AgentMode | None = None


@frozen
class StorageSettings:
    """`storage:`: sqlite (default, `path`), cxdb (`addr` host:port for writes, `url` for HTTP reads) or postgres
    (`dsn`, or `dsn_env`: the environment variable holding it, so the password stays out of the file)."""

    backend: StorageBackend = "sqlite"
    path: str | None = None
    url: str | None = None
    addr: str | None = None
    dsn: str | None = field(default=None, repr=False)  # may hold a password: never in a repr
    dsn_env: str | None = None


@frozen
class DispatchSettings:
    """`dispatch:`: where work goes. Without `broker` (the default) everything runs in the process that asked for
    it; with a Redis `broker` (or `broker_env`, the variable holding its URL), `orchestra submit` and parallel
    branches go to a fleet of `orchestra worker`s (docs/fleet.md).

    Attributes:
        broker: The Celery broker URL (`redis://host:6379/0`); it is also the result backend.
        broker_env: The environment variable holding the broker URL (keeps a password out of the file).
        queue: The default queue.
        pickup_interval: How often each worker looks for sessions whose worker was lost.
        visibility_timeout: Redis redelivers a message its worker never acknowledged after this long (the broker's
            last resort: work is picked up sooner, by the session lock and the fleet's ledger).
        branches: `fleet` (default): the branches of a parallel node on the main line go to the fleet as tasks of
            their own; `local`: they run in the threads of whoever runs the session, as on one machine.
        claim_after: A branch no worker has taken after this long runs in the process that runs its session, when
            that process serves the branch's queue (a worker, or `orchestra run` for the default queue): a busy
            fleet never leaves a session waiting on its own branches.
    """

    broker: str | None = field(default=None, repr=False)  # may hold a password: never in a repr
    broker_env: str | None = None
    queue: str = "orchestra"
    pickup_interval: Seconds = Seconds(5.0)
    visibility_timeout: Seconds = Seconds(3600.0)
    branches: BranchDispatch = "fleet"
    claim_after: Seconds = Seconds(2.0)

    @property
    def fleet(self) -> bool:
        """Whether a broker is configured (work goes to a fleet)."""
        return bool(self.broker or self.broker_env)


@frozen
class SandboxSettings:
    """`sandbox:`: an OS sandbox around the commands Orchestra runs (tool nodes, project tools, tool hooks) and
    its CLI agents.

    `bubblewrap` runs each command with the filesystem read-only except the session's worktrees (their git
    directories read-only too), the `writable` paths (relative to this file, `~` expanded) and a private
    `/tmp`; the network is off unless `network` is true.
    """

    kind: SandboxKind = "none"
    network: bool = False
    writable: tuple[str, ...] = field(default=(), converter=str_tuple)


@frozen
class CliAgentSettings:
    """`claude_code:` / `codex:`: how a CLI coding agent backend starts its agent.

    Attributes:
        command: The executable (a name on PATH or a path; `~` expanded); default `claude` / `codex`.
        args: Extra arguments added to every invocation, as given.
        model: The model the agent is asked for (a node's `llm_model` wins); default: the agent's own.
        tools: The agent's native tools it keeps (e.g. `Read`, `Grep`); default none, only Orchestra's.
        disallowed_tools: Native tools removed even when `tools` keeps them.
        timeout: Seconds before the agent and everything it started are killed (a node's `timeout` wins).
        env: Environment variables for the agent, on top of the inherited ones.
    """

    command: str | None = None
    args: tuple[str, ...] = field(default=(), converter=str_tuple)
    model: str | None = None
    tools: tuple[str, ...] = field(default=(), converter=str_tuple)
    disallowed_tools: tuple[str, ...] = field(default=(), converter=str_tuple)
    timeout: Seconds | None = None
    env: Mapping[str, str] = field(factory=dict, converter=frozen_map)


@frozen
class NotifyTargetSettings:
    """`notify[i]`: a webhook (`url`, or `url_env` naming the variable that holds it) or a `command` (a program
    and its arguments, never a shell line) told about some of a run's events (docs/running.md, Notifications).

    Attributes:
        url: The webhook's http(s) address.
        url_env: The environment variable holding the address (a Slack webhook's address is its secret).
        command: The program and its arguments; it gets the notification's JSON on its standard input.
        events: The events it hears about; empty: every one (NOTIFY_EVENT_NAMES).
        secret_env: The environment variable holding the secret a webhook's bodies are signed with
            (`X-Orchestra-Signature: sha256=<HMAC-SHA256 of the body>`).
        format: `json` (Orchestra's document) or `slack` (a Slack incoming webhook's message); webhooks only.
        timeout: How long one attempt may take.
    """

    url: str | None = field(default=None, repr=False)  # may hold a token: never in a repr
    url_env: str | None = None
    command: tuple[str, ...] = field(default=(), converter=str_tuple)
    events: tuple[NotifyEventName, ...] = field(default=(), converter=str_tuple)
    secret_env: str | None = None
    format: NotifyFormat = "json"
    timeout: Seconds = Seconds(10.0)

    @property
    def webhook(self) -> bool:
        """Whether it is a webhook (else a command)."""
        return self.url is not None or self.url_env is not None

    def wants(self, event: str) -> bool:
        """Whether it hears about `event`."""
        return not self.events or event in self.events


def _notify_targets(items: Sequence[NotifyTargetSettings] | None) -> tuple[NotifyTargetSettings, ...]:
    return tuple(items or ())


@frozen
class TelemetrySettings:
    """`telemetry:`: OpenTelemetry traces of every run, exported over OTLP/HTTP (the `otel` extra; docs/running.md).

    The standard variables win over the file: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the traces URL as it is),
    `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL), `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`;
    `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn tracing off.

    Attributes:
        otlp_endpoint: The collector's OTLP/HTTP base URL (`http://localhost:4318`; `/v1/traces` is added
            unless the path already ends with it). None (and no variable): no tracing, nothing imported.
        headers: HTTP headers sent with every export (values as written; keep secrets in `headers_env`).
        headers_env: Header name -> the environment variable holding its value (an API key).
        service_name: The `service.name` of the spans' resource (default `OTEL_SERVICE_NAME`, else `orchestra`).
        flush_timeout: At the end of a run, how long it waits at most for its last spans to be sent.
    """

    otlp_endpoint: str | None = None
    headers: Mapping[str, str] = field(factory=dict, converter=frozen_map, repr=False)  # may hold a secret
    headers_env: Mapping[str, str] = field(factory=dict, converter=frozen_map)
    service_name: str | None = None
    flush_timeout: Seconds = Seconds(5.0)


@frozen
class BudgetSettings:
    """`budget:`: what a session may spend (docs/running.md, "Budgets"); graph attributes and `--max-cost`
    override it key by key.

    Attributes:
        max_cost_usd: US dollars, over the session's runs (resumes, replays' history, parallel branches).
        max_tokens: Prompt plus completion tokens of the session's agent turns.
        max_wall_time: Seconds the session's runs may take, added over its resumes.
    """

    max_cost_usd: PositiveDollars | None = None
    max_tokens: PositiveCount | None = None
    max_wall_time: Seconds | None = None

    def to_budget(self) -> Budget:
        cost = Money.usd(self.max_cost_usd) if self.max_cost_usd is not None else None
        return Budget(cost, self.max_tokens, self.max_wall_time)


@frozen
class AcpSettings:
    """`acp:`: how the ACP backend starts its agent, a program speaking the Agent Client Protocol on stdio
    (docs/backends.md, "ACP agents").

    Attributes:
        command: The agent's program and its arguments (`[gemini, --experimental-acp]`); a program with a `/` is
            a path (`~` expanded, relative to the project root), else looked up on PATH.
        env: Environment variables for the agent, on top of the inherited ones.
        timeout: Seconds before the agent and everything it started are stopped (a node's `timeout` wins).
        model: The model the agent is set to answer with (in its own configuration, e.g. `env`), which its turns
            and their commits name: ACP does not tell the client. Unset: the agent's name.
        auth_method: The id of the agent's authentication method Orchestra asks for (`authenticate`) before it
            opens a session (`gemini-api-key`); None: none asked for (the agent's own settings decide).
    """

    command: tuple[str, ...] = field(default=(), converter=str_tuple)
    env: Mapping[str, str] = field(factory=dict, converter=frozen_map)
    timeout: Seconds | None = None
    model: str | None = None
    auth_method: str | None = None


# orchestra.yaml's key of each CLI agent -> its backend name (the key under `OrchestraSettings.cli_agents`).
CLI_AGENT_KEYS: Mapping[str, str] = {"claude_code": "claude-code", "codex": "codex"}


@frozen
class PipelineSettings:
    """`pipelines.<name>`: settings for one pipeline (by its digraph name)."""

    backend: str | None = None


@frozen
class OrchestraSettings:
    """A whole orchestra.yaml.

    `source_path` (the file it came from) and `project_root` are set by the loader, not by YAML keys.
    `cli_agents` holds the `claude_code:` and `codex:` sections under their backend names (`claude-code`,
    `codex`; see CLI_AGENT_KEYS); an agent without a section is absent.
    """

    providers: ProvidersSettings = field(factory=ProvidersSettings)
    backend: str | None = None
    pipelines: Mapping[str, PipelineSettings] = field(factory=dict, converter=frozen_map)
    workspace: WorkspaceSettings = field(factory=WorkspaceSettings)
    agents: Mapping[str, AgentSettings] = field(factory=dict, converter=frozen_map)
    storage: StorageSettings = field(factory=StorageSettings)
    prompts: tuple[str, ...] = field(default=("prompts",), converter=str_tuple)
    sandbox: SandboxSettings = field(factory=SandboxSettings)
    dispatch: DispatchSettings = field(factory=DispatchSettings)
    cli_agents: Mapping[str, CliAgentSettings] = field(factory=dict, converter=frozen_map)
    acp: AcpSettings = field(factory=AcpSettings)
    notify: tuple[NotifyTargetSettings, ...] = field(default=(), converter=_notify_targets)
    telemetry: TelemetrySettings = field(factory=TelemetrySettings)
    pricing: Mapping[str, ModelPrice] = field(factory=dict, converter=frozen_map)
    budget: BudgetSettings = field(factory=BudgetSettings)
    source_path: Path | None = None
    project_root: Path | None = None

    @property
    def base_dir(self) -> Path:
        """Where relative paths in this file are resolved from: its directory, else the project root."""
        if self.source_path is not None:
            return self.source_path.parent
        return self.project_root or Path.cwd()

    def resolve_path(self, path: str) -> Path:
        """A path from this file (`~` expanded), made absolute against `base_dir`."""
        expanded = Path(path).expanduser()
        return expanded if expanded.is_absolute() else self.base_dir / expanded

    def prompt_dirs(self) -> tuple[Path, ...]:
        """The `prompts` search paths as absolute directories, in order."""
        return tuple(self.resolve_path(entry) for entry in self.prompts)

    def backend_for(self, pipeline: str) -> str | None:
        """The backend for a pipeline: `pipelines.<name>.backend`, else the global `backend`."""
        configured = self.pipelines.get(pipeline)
        if configured is not None and configured.backend:
            return configured.backend
        return self.backend
