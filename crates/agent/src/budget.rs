//! The context budget: how many tokens the next request's prompt may use before the
//! conversation is compacted, and a cheap estimate of how many it does use.
//!
//! The estimate counts characters (4 per token, plus a little per message and part) from
//! string lengths alone, so checking a 1,000-message history costs microseconds. Real
//! tokenizers differ, so each response's reported `input_tokens` calibrates it: the ratio of
//! reported to estimated tokens for the request just sent scales later estimates (never
//! below 1, so a provider that reports nothing leaves the plain estimate).
//!
//! A provider's overflow error teaches the real window: the number the error states
//! (`maximum context length is 8192 tokens`, `… > 8192 maximum`), else nine tenths of the
//! refused prompt's calibrated size. The budget keeps the smaller of the catalog's window
//! and every window learned, for the rest of the session — a later success recalibrates the
//! estimate but does not forget the window — and the compaction record of the overflow
//! stores it, so a resumed session starts from it too.

use podcode_config::CompactionConfig;
use podcode_protocol::ToolSpec;
use podcode_providers::{Message, ModelInfo, Part};

/// Characters per token in the estimate.
const CHARS_PER_TOKEN: u64 = 4;
/// Framing per message and per part (role, ids, JSON punctuation), in tokens.
const PER_MESSAGE: u64 = 4;
const PER_PART: u64 = 3;
/// The reply's room is the model's output limit, capped so a huge limit does not eat the
/// window: at most this many tokens, and at most a quarter of the window.
const MAX_REPLY_RESERVE: u64 = 32_000;
/// Without a stated limit, the window learned from an overflow is this share of the size
/// of the refused prompt (the provider's count was somewhere below it).
const REFUSED_SHARE: f64 = 0.9;

/// Estimated tokens of one part.
pub fn estimate_part(part: &Part) -> u64 {
    let chars = match part {
        Part::Text { text } => text.len(),
        Part::Reasoning { text, signature } => {
            text.len() + signature.as_ref().map_or(0, |s| s.len())
        }
        Part::ToolCall {
            id,
            name,
            arguments,
        } => id.len() + name.len() + arguments.len(),
        Part::ToolResult {
            call_id,
            output,
            attachments,
            ..
        } => {
            // An image costs about a thousand tokens whatever its encoded size.
            call_id.len() + output.len() + attachments.len() * 4_000
        }
        Part::Image { .. } => 4_000,
    } as u64;
    chars.div_ceil(CHARS_PER_TOKEN) + PER_PART
}

/// Estimated tokens of a message list. Plain loops: this runs before every request over
/// the whole history, and must stay cheap even in an unoptimised build.
pub fn estimate_messages(messages: &[Message]) -> u64 {
    let mut total = 0;
    for m in messages {
        total += PER_MESSAGE;
        for p in &m.parts {
            total += estimate_part(p);
        }
    }
    total
}

/// Estimated tokens of what every request repeats: the system prompt and the tool specs
/// (`tools_chars`, from `estimate_tools`).
pub fn estimate_fixed(system: &str, tools_chars: u64) -> u64 {
    (system.len() as u64 + tools_chars).div_ceil(CHARS_PER_TOKEN) + PER_MESSAGE
}

/// The characters of `tools` that count toward every request: names, descriptions and
/// schemas as compact JSON.
pub fn estimate_tools(tools: &[ToolSpec]) -> u64 {
    tools
        .iter()
        .map(|t| (t.id.len() + t.description.len() + json_len(&t.parameters)) as u64)
        .sum()
}

/// The length of `value` as compact JSON, counted as it is written rather than built as a
/// string: this runs for every tool before every request.
fn json_len(value: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).map_or(0, |()| count.0)
}

/// The budget of one model in one session.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// The model's context window.
    pub context: u64,
    /// Room kept for the reply.
    pub reserve: u64,
    /// The fraction of `context - reserve` past which the prompt is compacted.
    pub threshold: f64,
    /// Reported ÷ estimated tokens of the last request (≥ 1).
    pub calibration: f64,
    /// The smallest window a provider's overflow error taught, when below `context`.
    pub learned: Option<u64>,
}

impl Budget {
    /// A budget for the model's context window and reply limit, with `config`'s threshold.
    pub fn new(info: &ModelInfo, config: &CompactionConfig) -> Self {
        let reserve = info.output.min(MAX_REPLY_RESERVE).min(info.context / 4);
        Self {
            context: info.context,
            reserve,
            threshold: config.threshold.clamp(0.1, 1.0),
            calibration: 1.0,
            learned: None,
        }
    }

    /// The window in force: the catalog's, or the smaller one an overflow taught.
    pub fn window(&self) -> u64 {
        self.learned.map_or(self.context, |l| l.min(self.context))
    }

    /// Room kept for the reply: at most a quarter of the window in force.
    pub fn reply_reserve(&self) -> u64 {
        self.reserve.min(self.window() / 4)
    }

    /// The most prompt tokens a request may have before it is compacted.
    pub fn limit(&self) -> u64 {
        (self.window().saturating_sub(self.reply_reserve()) as f64 * self.threshold) as u64
    }

    /// Takes `window` as the real one when it is below what is known.
    pub fn learn(&mut self, window: u64) {
        if window > 0 && window < self.window() {
            self.learned = Some(window);
        }
    }

    /// The calibrated estimate of a prompt of `fixed` tokens plus `messages`.
    pub fn estimate(&self, fixed: u64, messages: &[Message]) -> u64 {
        self.scale(fixed + estimate_messages(messages))
    }

    /// Applies the calibration to a raw estimate.
    pub fn scale(&self, raw: u64) -> u64 {
        (raw as f64 * self.calibration).ceil() as u64
    }

    /// Whether the prompt passes the threshold.
    pub fn over(&self, fixed: u64, messages: &[Message]) -> bool {
        self.estimate(fixed, messages) > self.limit()
    }

    /// Learns from a response: `raw` was the uncalibrated estimate of the prompt sent,
    /// `reported` the provider's count. Small prompts are too noisy to learn from.
    pub fn calibrate(&mut self, raw: u64, reported: u64) {
        if reported == 0 || raw < 1_000 {
            return;
        }
        self.calibration = (reported as f64 / raw as f64).clamp(1.0, 4.0);
    }

    /// The provider refused a prompt estimated at `raw` tokens as too long, saying
    /// `message`: learn the window (the one it states, else a little under the refused
    /// prompt's size) and count such a prompt as past it from now on.
    pub fn overflowed(&mut self, raw: u64, message: &str) {
        if raw == 0 {
            return;
        }
        let refused = self.scale(raw);
        let window = stated_window(message)
            .unwrap_or((refused as f64 * REFUSED_SHARE) as u64)
            .max(1);
        self.learn(window);
        let needed = self.window() as f64 * 1.05 / raw as f64;
        self.calibration = self.calibration.max(needed).clamp(1.0, 4.0);
    }
}

/// The context window an overflow error states, in the providers' wordings: OpenAI's and
/// vLLM's "maximum context length is N tokens", Anthropic's "… tokens > N maximum", and
/// "context window of N", "limit of N", "maximum of N". Numbers may carry commas.
pub fn stated_window(message: &str) -> Option<u64> {
    let m = message.to_ascii_lowercase();
    const BEFORE: &[&str] = &[
        "maximum context length is",
        "context length is",
        "context length of",
        "context window is",
        "context window of",
        "context size is",
        "context size of",
        "maximum of",
        "limit of",
        "limit is",
    ];
    for key in BEFORE {
        if let Some(i) = m.find(key)
            && let Some(n) = leading_number(&m[i + key.len()..])
        {
            return Some(n);
        }
    }
    // "208310 tokens > 200000 maximum"
    let (_, after) = m.split_once(" > ")?;
    let n = leading_number(after)?;
    after
        .trim_start()
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == ',')
        .trim_start()
        .starts_with("maximum")
        .then_some(n)
}

/// The number at the start of `s` (after spaces), commas allowed; small numbers (no real
/// window) are not taken.
fn leading_number(s: &str) -> Option<u64> {
    let digits: String = s
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|n| *n >= 256)
}

#[cfg(test)]
mod tests {
    use super::*;
    use podcode_providers::Role;

    #[test]
    fn a_schema_is_counted_as_long_as_its_compact_json() {
        let schema = serde_json::json!({"type": "object", "properties": {"a": {"type": "string", "description": "é \"q\""}}});
        assert_eq!(
            json_len(&schema),
            serde_json::to_string(&schema).unwrap().len()
        );
    }

    fn info(context: u64, output: u64) -> ModelInfo {
        ModelInfo {
            context,
            output,
            ..ModelInfo::fallback()
        }
    }

    #[test]
    fn the_limit_leaves_room_for_the_reply() {
        let cfg = CompactionConfig::default();
        let b = Budget::new(&info(8_000, 1_000), &cfg);
        assert_eq!((b.reserve, b.limit()), (1_000, 5_950));
        let big = Budget::new(&info(200_000, 64_000), &cfg);
        assert_eq!(big.reserve, 32_000);
        let odd = Budget::new(&info(8_000, 8_000), &cfg);
        assert_eq!(odd.reserve, 2_000, "at most a quarter of the window");
    }

    #[test]
    fn estimates_grow_with_text_and_calibration_scales_them() {
        let m = |n: usize| Message {
            role: Role::User,
            parts: vec![Part::Text {
                text: "x".repeat(n),
            }],
        };
        assert_eq!(estimate_messages(&[m(400)]), 100 + PER_PART + PER_MESSAGE);
        let mut b = Budget::new(&info(8_000, 1_000), &CompactionConfig::default());
        let raw = b.estimate(0, &[m(8_000)]);
        b.calibrate(raw, raw * 2);
        assert_eq!(b.estimate(0, &[m(8_000)]), raw * 2);
        b.calibrate(raw, raw / 2);
        assert_eq!(b.calibration, 1.0, "never below the plain estimate");
        b.overflowed(4_000, "context_length_exceeded");
        assert!(
            b.scale(4_000) > b.limit(),
            "the refused prompt is now over the budget"
        );
    }

    #[test]
    fn an_overflow_teaches_the_window_and_a_success_does_not_forget_it() {
        let cfg = CompactionConfig::default();
        let mut b = Budget::new(&info(128_000, 4_000), &cfg);
        b.overflowed(20_000, "Input is too long for this model.");
        assert_eq!(b.window(), 18_000, "nine tenths of the refused prompt");
        b.calibrate(20_000, 20_000);
        assert_eq!(b.calibration, 1.0);
        assert_eq!(b.window(), 18_000);
        assert!(b.limit() < 18_000);
        b.learn(100_000);
        assert_eq!(b.window(), 18_000, "a larger window is never learned");
        let mut s = Budget::new(&info(128_000, 4_000), &cfg);
        s.overflowed(9_000, "This model's maximum context length is 8,192 tokens. However, your messages resulted in 9,001 tokens (8,001 in the messages, 1,000 in the completion).");
        assert_eq!(s.window(), 8_192);
    }

    #[test]
    fn the_providers_stated_windows_are_read() {
        for (m, w) in [
            (
                "This model's maximum context length is 128000 tokens. However, your messages resulted in 130382 tokens.",
                Some(128_000),
            ),
            (
                "prompt is too long: 208310 tokens > 200000 maximum",
                Some(200_000),
            ),
            (
                "input exceeds the context window of 32768 tokens",
                Some(32_768),
            ),
            ("Request exceeds the limit of 65,536 tokens", Some(65_536)),
            (
                "the request exceeds the available context size, try increasing it",
                None,
            ),
            ("prompt is too long", None),
        ] {
            assert_eq!(stated_window(m), w, "{m}");
        }
    }
}
