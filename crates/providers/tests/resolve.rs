//! `resolve`: model precedence, built-in and configured providers, keys, and the message
//! shown when nothing is configured.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;

use podcode_config::{Config, ProviderConfig};
use podcode_providers::testing::{Reply, ScriptedModel};
use podcode_providers::*;

fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

fn resolved(
    config: &Config,
    over: Option<&str>,
    vars: &[(&str, &str)],
) -> Result<ResolvedModel, ProviderError> {
    resolve_model(config, over, &env(vars))
}

fn config(model: Option<&str>) -> Config {
    Config {
        model: model.map(str::to_string),
        ..Config::default()
    }
}

#[test]
fn nothing_configured_shows_the_three_ways() {
    let err = resolved(&Config::default(), None, &[("OPENAI_API_KEY", "  ")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "\
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
Or pass --model provider/model-id."
    );
    assert!(matches!(err, ProviderError::Config(_)));
}

#[test]
fn override_beats_config_beats_environment() {
    let vars = [
        ("ANTHROPIC_API_KEY", "ak"),
        ("OPENAI_API_KEY", "ok"),
        ("GROQ_API_KEY", "gk"),
    ];
    let c = config(Some("openai/gpt-4o"));
    assert_eq!(
        resolved(&c, Some("groq/llama-3"), &vars)
            .unwrap()
            .model
            .to_string(),
        "groq/llama-3"
    );
    assert_eq!(
        resolved(&c, None, &vars).unwrap().model.to_string(),
        "openai/gpt-4o"
    );
    let r = resolved(&Config::default(), None, &vars).unwrap();
    assert_eq!(
        (r.model.to_string(), r.protocol),
        (
            "anthropic/claude-sonnet-4-5".into(),
            WireProtocol::Anthropic
        )
    );
    assert_eq!(r.endpoint.base_url, "https://api.anthropic.com/v1");
    assert_eq!(r.endpoint.api_key.as_deref(), Some("ak"));
    assert_eq!(r.endpoint.api_key_env.as_deref(), Some("ANTHROPIC_API_KEY"));

    let pick = |vars: &[(&str, &str)]| {
        resolved(&Config::default(), None, vars)
            .unwrap()
            .model
            .to_string()
    };
    assert_eq!(
        pick(&[("OPENAI_API_KEY", "k"), ("OLLAMA_HOST", "h")]),
        "openai/gpt-4.1"
    );
    assert_eq!(
        pick(&[("OPENROUTER_API_KEY", "k")]),
        "openrouter/anthropic/claude-sonnet-4.5"
    );
    assert_eq!(pick(&[("DEEPSEEK_API_KEY", "k")]), "deepseek/deepseek-chat");
    assert_eq!(
        pick(&[("OLLAMA_HOST", "http://10.1.1.1:11434")]),
        "ollama/llama3.1"
    );
}

#[test]
fn builtin_endpoints() {
    let r = resolved(&config(Some("ollama/qwen3")), None, &[]).unwrap();
    assert_eq!(
        (r.endpoint.base_url.as_str(), r.endpoint.api_key.clone()),
        ("http://127.0.0.1:11434/v1", None)
    );
    let r = resolved(
        &config(Some("ollama/qwen3")),
        None,
        &[("OLLAMA_HOST", "gpu-box")],
    )
    .unwrap();
    assert_eq!(r.endpoint.base_url, "http://gpu-box:11434/v1");
    let r = resolved(&config(Some("lmstudio/any")), None, &[]).unwrap();
    assert_eq!(r.endpoint.base_url, "http://127.0.0.1:1234/v1");
    let r = resolved(
        &config(Some("openrouter/meta-llama/llama-3.1-70b")),
        None,
        &[("OPENROUTER_API_KEY", "k")],
    )
    .unwrap();
    assert_eq!(
        (r.model.model.as_str(), r.endpoint.base_url.as_str()),
        ("meta-llama/llama-3.1-70b", "https://openrouter.ai/api/v1")
    );
    assert_eq!(r.protocol, WireProtocol::OpenAi);
    let r = resolved(&config(Some("groq/x")), None, &[("GROQ_API_KEY", "k")]).unwrap();
    assert_eq!(r.endpoint.base_url, "https://api.groq.com/openai/v1");
    let r = resolved(
        &config(Some("deepseek/x")),
        None,
        &[("DEEPSEEK_API_KEY", "k")],
    )
    .unwrap();
    assert_eq!(r.endpoint.base_url, "https://api.deepseek.com/v1");
}

#[test]
fn provider_blocks_override_and_define_providers() {
    let mut c = config(Some("openai/gpt-4.1"));
    let mut headers = std::collections::BTreeMap::new();
    headers.insert("X-Org".to_string(), "acme".to_string());
    c.provider.insert(
        "openai".into(),
        ProviderConfig {
            base_url: Some("https://proxy.example/v1".into()),
            api_key_env: Some("PROXY_KEY".into()),
            headers,
            api: None,
            models: Default::default(),
        },
    );
    c.provider.insert(
        "vllm".into(),
        ProviderConfig {
            base_url: Some("http://gpu:8000/v1".into()),
            api_key_env: None,
            headers: Default::default(),
            api: None,
            models: Default::default(),
        },
    );
    let r = resolved(
        &c,
        None,
        &[("PROXY_KEY", "pk"), ("OPENAI_API_KEY", "unused")],
    )
    .unwrap();
    assert_eq!(r.endpoint.base_url, "https://proxy.example/v1");
    assert_eq!(r.endpoint.api_key.as_deref(), Some("pk"));
    assert_eq!(r.endpoint.headers["X-Org"], "acme");

    let r = resolved(&c, Some("vllm/qwen"), &[]).unwrap();
    assert_eq!(
        (
            r.protocol,
            r.endpoint.base_url.as_str(),
            r.endpoint.api_key.clone()
        ),
        (WireProtocol::OpenAi, "http://gpu:8000/v1", None)
    );

    // A gateway of your own that speaks Anthropic Messages.
    c.provider.insert(
        "gateway".into(),
        ProviderConfig {
            base_url: Some("https://llm.corp.example".into()),
            api_key_env: Some("GATEWAY_KEY".into()),
            api: Some(podcode_config::ProviderApi::Anthropic),
            ..Default::default()
        },
    );
    let r = resolved(
        &c,
        Some("gateway/claude-sonnet-4-5"),
        &[("GATEWAY_KEY", "g")],
    )
    .unwrap();
    assert_eq!(r.protocol, WireProtocol::Anthropic);
    // And the reverse: the anthropic name pointed at an OpenAI-compatible proxy.
    c.provider.insert(
        "anthropic".into(),
        ProviderConfig {
            base_url: Some("http://proxy:4000/v1".into()),
            api: Some(podcode_config::ProviderApi::Openai),
            ..Default::default()
        },
    );
    let r = resolved(
        &c,
        Some("anthropic/claude-x"),
        &[("ANTHROPIC_API_KEY", "k")],
    )
    .unwrap();
    assert_eq!(r.protocol, WireProtocol::OpenAi);

    c.provider.insert("nourl".into(), ProviderConfig::default());
    let err = resolved(&c, Some("nourl/m"), &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "[provider.nourl] needs a base_url, e.g. base_url = \"https://api.example.com/v1\""
    );
}

#[test]
fn missing_keys_unknown_providers_and_bad_model_strings() {
    let err = resolved(&config(Some("anthropic/claude-x")), None, &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "anthropic/claude-x needs an API key: export ANTHROPIC_API_KEY=..., or store one with `podcode auth login anthropic` (or set api_key_env under [provider.anthropic] in ~/.config/podcode/config.toml to the variable that holds it)"
    );
    let err = resolved(&config(Some("my-llm/m")), None, &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown provider `my-llm` in model `my-llm/m`. Built-in providers: anthropic, openai, openrouter, groq, deepseek, ollama, lmstudio. To use another OpenAI-compatible server, define it in ~/.config/podcode/config.toml:\n  [provider.my-llm]\n  base_url = \"https://api.example.com/v1\"\n  api_key_env = \"MY_LLM_API_KEY\""
    );
    let err = resolved(&config(Some("gpt-4o")), None, &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "model `gpt-4o` must be written as provider/model-id, e.g. openai/gpt-4.1 or anthropic/claude-sonnet-4-5"
    );
}

#[tokio::test]
async fn resolved_clients_talk_to_the_configured_base_url() {
    let server = ScriptedModel::start(vec![
        Reply::new().text("via anthropic"),
        Reply::new().text("via custom"),
        Reply::new().text("via gateway"),
    ])
    .await;
    let mut c = config(Some("anthropic/claude-test"));
    let block = ProviderConfig {
        base_url: Some(server.base_url()),
        api_key_env: Some("MY_KEY".into()),
        headers: Default::default(),
        api: None,
        models: Default::default(),
    };
    c.provider.insert("anthropic".into(), block.clone());
    c.provider.insert(
        "scripted".into(),
        ProviderConfig {
            api_key_env: None,
            ..block.clone()
        },
    );
    let vars = [("MY_KEY", "secret")];

    let client = resolve(&c, None, &env(&vars)).unwrap();
    assert_eq!(client.model().to_string(), "anthropic/claude-test");
    let (events, _) = common::run(client.as_ref(), common::request(vec![common::user("hi")]))
        .await
        .unwrap();
    assert_eq!(common::text_of(&events), "via anthropic");

    let client = resolve(&c, Some("scripted/m1"), &env(&vars)).unwrap();
    let (events, _) = common::run(client.as_ref(), common::request(vec![common::user("hi")]))
        .await
        .unwrap();
    assert_eq!(common::text_of(&events), "via custom");

    // A provider of your own that speaks Anthropic Messages (`api = "anthropic"`).
    c.provider.insert(
        "gateway".into(),
        ProviderConfig {
            api: Some(podcode_config::ProviderApi::Anthropic),
            ..block.clone()
        },
    );
    let client = resolve(&c, Some("gateway/claude-test"), &env(&vars)).unwrap();
    let (events, _) = common::run(client.as_ref(), common::request(vec![common::user("hi")]))
        .await
        .unwrap();
    assert_eq!(common::text_of(&events), "via gateway");

    let recorded = server.recorded();
    assert_eq!(
        (
            recorded[0].path.as_str(),
            recorded[0].headers["x-api-key"].as_str()
        ),
        ("/v1/messages", "secret")
    );
    assert_eq!(recorded[1].path, "/v1/chat/completions");
    assert!(!recorded[1].headers.contains_key("authorization"));
    assert_eq!(recorded[1].body["model"], "m1");
    assert_eq!(recorded[2].path, "/v1/messages");
    assert_eq!(recorded[2].body["model"], "claude-test");
}

#[test]
fn stored_credentials_fill_in_for_a_missing_key_variable() {
    let c = config(Some("anthropic/claude-x"));
    let stored = |key: Option<StoredCredential>| {
        move |p: &str| (p == "anthropic").then(|| key.clone()).flatten()
    };
    let with_key = stored(Some(StoredCredential::ApiKey("sk-stored".into())));
    let r = resolve_model_with(&c, None, &env(&[]), &with_key).unwrap();
    assert_eq!(r.endpoint.api_key.as_deref(), Some("sk-stored"));
    assert!(r.endpoint.stored_key);
    // The variable still wins over what was stored.
    let r = resolve_model_with(
        &c,
        None,
        &env(&[("ANTHROPIC_API_KEY", "sk-env")]),
        &with_key,
    )
    .unwrap();
    assert_eq!(r.endpoint.api_key.as_deref(), Some("sk-env"));
    assert!(!r.endpoint.stored_key);
    // Signed in through a plugin: no key, and no error for the missing variable.
    let signed = stored(Some(StoredCredential::SignedIn));
    let r = resolve_model_with(&c, None, &env(&[]), &signed).unwrap();
    assert_eq!(r.endpoint.api_key, None);
    // Another provider's credentials do not count.
    let other = resolve_model_with(&config(Some("openai/gpt-x")), None, &env(&[]), &with_key);
    assert!(other.is_err());
}
