//! The model catalog: each built-in provider's models with their context window, largest
//! reply, prices and capabilities. The data is `data/models.json` (curated by hand, embedded
//! in the binary); `[provider.<name>.models."<id>"]` in config overrides any field, and a
//! model found nowhere gets [`ModelInfo::fallback`] — a small window, so compaction starts
//! early rather than too late — with one warning saying how to declare it.
//!
//! Lookup: the provider's own table, exact id first, then the id without a date or
//! `-latest` suffix, then the longest catalog id the model id starts with
//! (`gpt-4.1-2025-04-14` → `gpt-4.1`); a provider of one's own (a proxy) is looked up by the
//! id's last `/` segment in every table.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use podcode_config::{Config, ModelOverride};
use podcode_protocol::StepUsage;
use serde::{Deserialize, Serialize};

use crate::ModelRef;

const DATA: &str = include_str!("../data/models.json");

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Prices {
    /// Per million prompt tokens.
    pub input: f64,
    /// Per million completion tokens.
    pub output: f64,
    /// Reading cached input; the input price when unset.
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Writing input to the cache (Anthropic); the input price when unset.
    #[serde(default)]
    pub cache_write: Option<f64>,
}

/// What Podcode knows about one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The context window, in tokens (prompt and reply together).
    pub context: u64,
    /// The most tokens one reply may have.
    pub output: u64,
    /// Prices, when known; without them no cost is shown.
    #[serde(default)]
    pub cost: Option<Prices>,
    /// The model can call tools.
    #[serde(default)]
    pub tools: bool,
    /// The model accepts images.
    #[serde(default)]
    pub images: bool,
    /// The model produces reasoning.
    #[serde(default)]
    pub reasoning: bool,
    /// Found in the catalog or declared in config (false: the fallback).
    #[serde(skip)]
    pub known: bool,
}

impl ModelInfo {
    /// For a model found nowhere: 32k tokens of context, 4k of reply, no price.
    pub fn fallback() -> Self {
        Self {
            context: 32_768,
            output: 4_096,
            cost: None,
            tools: true,
            images: false,
            reasoning: false,
            known: false,
        }
    }

    /// The cost of a request's usage in USD, when prices are known. `input_tokens` counts
    /// cache reads and writes too; each part is priced at its own rate.
    pub fn cost_of(&self, u: &StepUsage) -> Option<f64> {
        let p = self.cost?;
        let cached = u.cache_read_tokens + u.cache_write_tokens;
        let fresh = u.input_tokens.saturating_sub(cached) as f64;
        let micro = fresh * p.input
            + u.cache_read_tokens as f64 * p.cache_read.unwrap_or(p.input)
            + u.cache_write_tokens as f64 * p.cache_write.unwrap_or(p.input)
            + u.output_tokens as f64 * p.output;
        Some(micro / 1_000_000.0)
    }
}

impl Default for ModelInfo {
    fn default() -> Self {
        Self::fallback()
    }
}

type Table = BTreeMap<String, BTreeMap<String, ModelInfo>>;

/// The built-in catalog, parsed once.
fn catalog() -> &'static Table {
    static CATALOG: OnceLock<Table> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let raw: BTreeMap<String, serde_json::Value> =
            serde_json::from_str(DATA).unwrap_or_default();
        raw.into_iter()
            .filter(|(k, _)| !k.starts_with('_'))
            .filter_map(|(k, v)| {
                let mut models: BTreeMap<String, ModelInfo> = serde_json::from_value(v).ok()?;
                for m in models.values_mut() {
                    m.known = true;
                }
                Some((k, models))
            })
            .collect()
    })
}

/// `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`; `claude-3-5-haiku-latest` →
/// `claude-3-5-haiku`; `gpt-4o-2024-08-06` → `gpt-4o`.
fn undated(id: &str) -> &str {
    if let Some(base) = id.strip_suffix("-latest") {
        return base;
    }
    let b = id.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if b.len() > 9 && b[b.len() - 9] == b'-' && digits(&b[b.len() - 8..]) {
        return &id[..id.len() - 9];
    }
    if b.len() > 11
        && b[b.len() - 11] == b'-'
        && b[b.len() - 6] == b'-'
        && b[b.len() - 3] == b'-'
        && digits(&b[b.len() - 10..b.len() - 6])
    {
        return &id[..id.len() - 11];
    }
    id
}

fn find_in(models: &BTreeMap<String, ModelInfo>, id: &str) -> Option<ModelInfo> {
    if let Some(m) = models.get(id).or_else(|| models.get(undated(id))) {
        return Some(m.clone());
    }
    models
        .iter()
        .filter(|(k, _)| id.starts_with(k.as_str()) && id.as_bytes().get(k.len()) == Some(&b'-'))
        .max_by_key(|(k, _)| k.len())
        .map(|(_, m)| m.clone())
}

/// The catalog's entry for a model, if any.
pub fn catalog_entry(model: &ModelRef) -> Option<ModelInfo> {
    let cat = catalog();
    if let Some(m) = cat
        .get(&model.provider)
        .and_then(|t| find_in(t, &model.model))
    {
        return Some(m);
    }
    let last = model.model.rsplit('/').next().unwrap_or(&model.model);
    cat.values().find_map(|t| find_in(t, last))
}

/// Every model Podcode knows: the catalog's and those declared under
/// `[provider.<name>.models."<id>"]`, each as `provider/model-id` with the config's override
/// on top, sorted by id.
pub fn known_models(config: &Config) -> Vec<(String, ModelInfo)> {
    let mut refs: std::collections::BTreeSet<(String, String)> = catalog()
        .iter()
        .flat_map(|(p, models)| models.keys().map(move |m| (p.clone(), m.clone())))
        .collect();
    for (p, provider) in &config.provider {
        refs.extend(provider.models.keys().map(|m| (p.clone(), m.clone())));
    }
    let mut out: Vec<(String, ModelInfo)> = refs
        .into_iter()
        .map(|(provider, model)| {
            let id = format!("{provider}/{model}");
            (id, model_info(config, &ModelRef { provider, model }))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// What Podcode knows about `model`: the catalog's entry with the config's override on top,
/// or the fallback (then `known` is false: show [`unknown_model_warning`] once).
pub fn model_info(config: &Config, model: &ModelRef) -> ModelInfo {
    let over = config
        .provider
        .get(&model.provider)
        .and_then(|p| p.models.get(&model.model));
    let mut info = catalog_entry(model).unwrap_or_default();
    if let Some(o) = over {
        apply(&mut info, o);
    }
    info
}

fn apply(info: &mut ModelInfo, o: &ModelOverride) {
    if let Some(c) = o.context {
        info.context = c;
        info.known = true;
    }
    if let Some(n) = o.output {
        info.output = n;
    }
    if let Some(c) = &o.cost {
        let mut prices = info.cost.unwrap_or_default();
        if let Some(v) = c.input {
            prices.input = v;
        }
        if let Some(v) = c.output {
            prices.output = v;
        }
        if c.cache_read.is_some() {
            prices.cache_read = c.cache_read;
        }
        if c.cache_write.is_some() {
            prices.cache_write = c.cache_write;
        }
        info.cost = Some(prices);
    }
}

/// Said once when a model is in neither the catalog nor the config (user-facing).
pub fn unknown_model_warning(model: &ModelRef) -> String {
    let fallback = ModelInfo::fallback();
    format!(
        "{model} is not in Podcode's model catalog: assuming a {}-token context window, \
         {}-token replies and no price (compaction starts early, cost is not shown). \
         Declare it in config.toml:\n  [provider.{}.models.\"{}\"]\n  context = 128000\n  \
         output = 8192\n  cost = {{ input = 1.0, output = 4.0 }}   # USD per million tokens",
        fallback.context, fallback.output, model.provider, model.model
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> ModelRef {
        ModelRef::parse(s).unwrap()
    }

    #[test]
    fn the_catalog_parses_and_covers_every_builtin_default() {
        let cat = catalog();
        assert!(cat.len() >= 5, "{:?}", cat.keys());
        for p in crate::BUILTIN_PROVIDERS {
            if let (Some(id), true) = (p.default_model, cat.contains_key(p.name)) {
                let info = catalog_entry(&m(&format!("{}/{id}", p.name)));
                assert!(info.is_some_and(|i| i.known), "{}/{id}", p.name);
            }
        }
    }

    #[test]
    fn dated_prefixed_and_proxied_ids_resolve() {
        let sonnet = catalog_entry(&m("anthropic/claude-sonnet-4-5-20250929")).unwrap();
        assert_eq!((sonnet.context, sonnet.output), (200_000, 64_000));
        let mini = catalog_entry(&m("openai/gpt-4.1-mini-2025-04-14")).unwrap();
        assert_eq!(mini.cost.unwrap().input, 0.4);
        let gpt = catalog_entry(&m("openai/gpt-4o-2024-08-06")).unwrap();
        assert_eq!(gpt.context, 128_000);
        let proxied = catalog_entry(&m("myproxy/openai/gpt-4o-mini")).unwrap();
        assert_eq!(proxied.cost.unwrap().output, 0.6);
        assert!(catalog_entry(&m("ollama/llama3.1")).is_none());
        assert!(
            catalog_entry(&m("openai/gpt-4")).is_none(),
            "no looser prefix"
        );
    }

    #[test]
    fn config_overrides_and_fallback() {
        let config: Config = toml::from_str(
            r#"
            [provider.anthropic.models."claude-sonnet-4-5"]
            context = 1000000
            cost = { input = 6 }
            [provider.local.models."qwen"]
            context = 8000
            output = 1000
            cost = { input = 1, output = 2 }
            "#,
        )
        .unwrap();
        let s = model_info(&config, &m("anthropic/claude-sonnet-4-5"));
        assert_eq!((s.context, s.output), (1_000_000, 64_000));
        assert_eq!(s.cost.unwrap().input, 6.0);
        assert_eq!(
            s.cost.unwrap().output,
            15.0,
            "unset fields keep the catalog's"
        );
        let q = model_info(&config, &m("local/qwen"));
        assert!(q.known);
        assert_eq!((q.context, q.output), (8000, 1000));
        let u = model_info(&config, &m("local/other"));
        assert!(!u.known);
        assert_eq!(u, ModelInfo::fallback());
        assert_eq!(
            unknown_model_warning(&m("local/other")),
            "local/other is not in Podcode's model catalog: assuming a 32768-token context \
             window, 4096-token replies and no price (compaction starts early, cost is not \
             shown). Declare it in config.toml:\n  [provider.local.models.\"other\"]\n  \
             context = 128000\n  output = 8192\n  cost = { input = 1.0, output = 4.0 }   # USD \
             per million tokens"
        );
    }

    #[test]
    fn cost_prices_each_kind_of_token() {
        let info = catalog_entry(&m("anthropic/claude-sonnet-4-5")).unwrap();
        let u = StepUsage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 500_000,
            cache_write_tokens: 100_000,
            ..Default::default()
        };
        // 400k fresh × 3 + 500k × 0.3 + 100k × 3.75 + 100k × 15, per million.
        let cost = info.cost_of(&u).unwrap();
        assert!((cost - (1.2 + 0.15 + 0.375 + 1.5)).abs() < 1e-9, "{cost}");
        assert_eq!(ModelInfo::fallback().cost_of(&u), None);
    }
}
