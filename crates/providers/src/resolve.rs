//! From configuration to a client: which model (`--model`, then `config.model`, then the
//! first provider key found in the environment), which provider (built-in, overridden or
//! defined by `[provider.<name>]`), and which key (`api_key_env`).

use std::sync::Arc;

use podcode_config::Config;

use crate::{
    AnthropicClient, Endpoint, ModelClient, ModelRef, OpenAiClient, ProviderError, WireProtocol,
};

/// A built-in provider: name, protocol, default base URL, key variable, model picked when
/// only its key is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinProvider {
    /// The provider's name in `provider/model`.
    pub name: &'static str,
    /// The wire protocol it speaks.
    pub protocol: WireProtocol,
    /// Its API's base URL (config may override it).
    pub base_url: &'static str,
    /// The environment variable holding its key; `None` for keyless local servers.
    pub api_key_env: Option<&'static str>,
    /// The model used when only this provider's key is set.
    pub default_model: Option<&'static str>,
}

const fn builtin(
    name: &'static str,
    protocol: WireProtocol,
    base_url: &'static str,
    api_key_env: Option<&'static str>,
    default_model: Option<&'static str>,
) -> BuiltinProvider {
    BuiltinProvider {
        name,
        protocol,
        base_url,
        api_key_env,
        default_model,
    }
}

/// The built-in providers, in the order their keys are looked for when no model is set.
/// `ollama`'s base URL comes from `OLLAMA_HOST` when set.
pub const BUILTIN_PROVIDERS: &[BuiltinProvider] = &[
    builtin(
        "anthropic",
        WireProtocol::Anthropic,
        "https://api.anthropic.com/v1",
        Some("ANTHROPIC_API_KEY"),
        Some("claude-sonnet-4-5"),
    ),
    builtin(
        "openai",
        WireProtocol::OpenAi,
        "https://api.openai.com/v1",
        Some("OPENAI_API_KEY"),
        Some("gpt-4.1"),
    ),
    builtin(
        "openrouter",
        WireProtocol::OpenAi,
        "https://openrouter.ai/api/v1",
        Some("OPENROUTER_API_KEY"),
        Some("anthropic/claude-sonnet-4.5"),
    ),
    builtin(
        "groq",
        WireProtocol::OpenAi,
        "https://api.groq.com/openai/v1",
        Some("GROQ_API_KEY"),
        Some("llama-3.3-70b-versatile"),
    ),
    builtin(
        "deepseek",
        WireProtocol::OpenAi,
        "https://api.deepseek.com/v1",
        Some("DEEPSEEK_API_KEY"),
        Some("deepseek-chat"),
    ),
    builtin(
        "ollama",
        WireProtocol::OpenAi,
        "http://127.0.0.1:11434/v1",
        None,
        Some("llama3.1"),
    ),
    builtin(
        "lmstudio",
        WireProtocol::OpenAi,
        "http://127.0.0.1:1234/v1",
        None,
        None,
    ),
];

/// What `podcode run` prints when no model can be found (user-facing).
pub const NOT_CONFIGURED: &str = "\
No model is configured. Set one up in any of these three ways:
  1. Put an API key in the environment:
       export ANTHROPIC_API_KEY=...   (or OPENAI_API_KEY, OPENROUTER_API_KEY, GROQ_API_KEY, DEEPSEEK_API_KEY)
  2. Use a local Ollama server:
       export OLLAMA_HOST=http://127.0.0.1:11434
     and set model = \"ollama/llama3.1\" in the config file
  3. Add a provider block to ~/.config/podcode/config.toml:
       model = \"myprovider/model-id\"
       [provider.myprovider]
       base_url = \"https://api.example.com/v1\"
       api_key_env = \"MYPROVIDER_API_KEY\"
Or pass --model provider/model-id.";

/// The outcome of resolution, before any client exists.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedModel {
    /// The model chosen.
    pub model: ModelRef,
    /// The wire protocol to speak to it.
    pub protocol: WireProtocol,
    /// Where to send requests, with the key and headers.
    pub endpoint: Endpoint,
}

impl ResolvedModel {
    /// The client for this model.
    pub fn client(self) -> Result<Arc<dyn ModelClient>, ProviderError> {
        Ok(match self.protocol {
            WireProtocol::OpenAi => Arc::new(OpenAiClient::new(self.model, self.endpoint)?),
            WireProtocol::Anthropic => Arc::new(AnthropicClient::new(self.model, self.endpoint)?),
        })
    }
}

/// Resolves and builds the client. See [`resolve_model`].
pub fn resolve(
    config: &Config,
    model_override: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn ModelClient>, ProviderError> {
    resolve_model(config, model_override, env)?.client()
}

/// What `podcode auth login` stored for a provider, as resolution uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredCredential {
    /// An API key (used when the provider's key variable is unset).
    ApiKey(String),
    /// Tokens an auth plugin signs requests with (no key needed here).
    SignedIn,
}

/// Picks the model (`model_override`, else `config.model`, else the first built-in provider
/// whose key — or `OLLAMA_HOST` — is in `env`), then its provider and key. A provider
/// named `anthropic`, or one with `api = "anthropic"`, speaks Anthropic Messages; every other
/// one is OpenAI-compatible.
/// Empty environment values count as unset.
pub fn resolve_model(
    config: &Config,
    model_override: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ResolvedModel, ProviderError> {
    resolve_model_with(config, model_override, env, &|_| None)
}

/// [`resolve_model`], also using the credentials `stored` gives for a provider: a stored API
/// key where its variable is unset (or it has none), and no key needed where an auth plugin
/// signs the requests.
pub fn resolve_model_with(
    config: &Config,
    model_override: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
    stored: &dyn Fn(&str) -> Option<StoredCredential>,
) -> Result<ResolvedModel, ProviderError> {
    let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let chosen = model_override
        .map(str::to_string)
        .or_else(|| config.model.clone());
    let text = match chosen {
        Some(m) => m,
        None => from_env(&env).ok_or_else(|| ProviderError::Config(NOT_CONFIGURED.to_string()))?,
    };
    let model = ModelRef::parse(text.trim()).ok_or_else(|| {
        ProviderError::Config(format!(
            "model `{text}` must be written as provider/model-id, e.g. openai/gpt-4.1 or anthropic/claude-sonnet-4-5"
        ))
    })?;
    let name = model.provider.as_str();
    let builtin = BUILTIN_PROVIDERS.iter().find(|b| b.name == name);
    let configured = config.provider.get(name);
    if builtin.is_none() && configured.is_none() {
        return Err(ProviderError::Config(unknown_provider(&model)));
    }

    let base_url = match (configured.and_then(|c| c.base_url.clone()), builtin) {
        (Some(url), _) => url,
        (None, Some(b)) if b.name == "ollama" => {
            env("OLLAMA_HOST").map_or_else(|| b.base_url.to_string(), |h| ollama_base(&h))
        }
        (None, Some(b)) => b.base_url.to_string(),
        (None, None) => {
            return Err(ProviderError::Config(format!(
                "[provider.{name}] needs a base_url, e.g. base_url = \"https://api.example.com/v1\""
            )));
        }
    };
    let key_env = configured
        .and_then(|c| c.api_key_env.clone())
        .or_else(|| builtin.and_then(|b| b.api_key_env).map(str::to_string));
    let mut endpoint = Endpoint::new(base_url);
    match (key_env.as_deref().and_then(env), stored(name)) {
        (Some(key), _) => endpoint = endpoint.with_key(key, key_env.as_deref()),
        (None, Some(StoredCredential::ApiKey(key))) => {
            endpoint = endpoint.with_key(key, key_env.as_deref());
            endpoint.stored_key = true;
        }
        (None, Some(StoredCredential::SignedIn)) => {}
        (None, None) => {
            if let Some(var) = key_env {
                return Err(ProviderError::Config(format!(
                    "{model} needs an API key: export {var}=..., or store one with `podcode auth login {name}` (or set api_key_env under [provider.{name}] in ~/.config/podcode/config.toml to the variable that holds it)"
                )));
            }
        }
    }
    if name == "openrouter" {
        endpoint.headers.insert("X-Title".into(), "Podcode".into());
    }
    if let Some(c) = configured {
        endpoint.headers.extend(c.headers.clone());
    }
    let protocol = match configured.and_then(|c| c.api) {
        Some(podcode_config::ProviderApi::Anthropic) => WireProtocol::Anthropic,
        Some(podcode_config::ProviderApi::Openai) => WireProtocol::OpenAi,
        None => builtin.map_or(WireProtocol::OpenAi, |b| b.protocol),
    };
    Ok(ResolvedModel {
        model,
        protocol,
        endpoint,
    })
}

fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    BUILTIN_PROVIDERS.iter().find_map(|b| {
        let var = b
            .api_key_env
            .or((b.name == "ollama").then_some("OLLAMA_HOST"))?;
        let model = b.default_model?;
        env(var).map(|_| format!("{}/{model}", b.name))
    })
}

/// `OLLAMA_HOST` as Ollama reads it (`host`, `host:port` or a URL) → its OpenAI-compatible base.
fn ollama_base(host: &str) -> String {
    let host = host.trim().trim_end_matches('/');
    let (scheme, rest) = host.split_once("://").unwrap_or(("http", host));
    let has_port = rest
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.chars().all(|c| c.is_ascii_digit()) && !p.is_empty());
    let rest = if has_port || rest.contains('/') {
        rest.to_string()
    } else {
        format!("{rest}:11434")
    };
    let base = format!("{scheme}://{rest}");
    if base.ends_with("/v1") {
        base
    } else {
        format!("{base}/v1")
    }
}

fn unknown_provider(model: &ModelRef) -> String {
    let names: Vec<&str> = BUILTIN_PROVIDERS.iter().map(|b| b.name).collect();
    let name = &model.provider;
    format!(
        "unknown provider `{name}` in model `{model}`. Built-in providers: {}. To use another \
         OpenAI-compatible server, define it in ~/.config/podcode/config.toml:\n  [provider.{name}]\n  \
         base_url = \"https://api.example.com/v1\"\n  api_key_env = \"{}_API_KEY\"",
        names.join(", "),
        name.to_uppercase().replace(['-', '.'], "_")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ollama_host_forms() {
        assert_eq!(
            ollama_base("http://127.0.0.1:11434"),
            "http://127.0.0.1:11434/v1"
        );
        assert_eq!(ollama_base("localhost"), "http://localhost:11434/v1");
        assert_eq!(ollama_base("10.0.0.5:8080/"), "http://10.0.0.5:8080/v1");
        assert_eq!(
            ollama_base("https://ollama.example.com/v1"),
            "https://ollama.example.com/v1"
        );
    }
}
