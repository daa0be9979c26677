//! `ToolList`: the tool definitions a request offers, shared between requests. The agent
//! keeps one list while the offered tools stay the same, and each wire protocol writes its
//! JSON of the list once (`ToolList::wire_json`): the definitions are ~20 KB of schemas that
//! would otherwise be serialized again for every step of a session.

use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use podcode_protocol::ToolSpec;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::options::Wire;

/// The tools a request offers (cheap to clone: clones share the list and its written JSON).
#[derive(Clone, Default)]
pub struct ToolList {
    specs: Arc<[ToolSpec]>,
    /// The list as each wire protocol sends it, written on first use.
    wire: Arc<[OnceLock<Box<RawValue>>; 2]>,
}

impl ToolList {
    /// The list's JSON for `wire`, written by `write` the first time it is asked for.
    pub(crate) fn wire_json(
        &self,
        wire: Wire,
        write: impl FnOnce(&[ToolSpec]) -> serde_json::Result<Box<RawValue>>,
    ) -> serde_json::Result<&RawValue> {
        let slot = &self.wire[match wire {
            Wire::OpenAi => 0,
            Wire::Anthropic => 1,
        }];
        if let Some(json) = slot.get() {
            return Ok(json);
        }
        let json = write(&self.specs)?;
        Ok(slot.get_or_init(|| json))
    }

    /// True when both are the same shared list (not merely equal ones).
    pub fn same_list(&self, other: &ToolList) -> bool {
        Arc::ptr_eq(&self.specs, &other.specs)
    }
}

impl From<Vec<ToolSpec>> for ToolList {
    fn from(specs: Vec<ToolSpec>) -> Self {
        ToolList {
            specs: specs.into(),
            wire: Arc::default(),
        }
    }
}

impl Deref for ToolList {
    type Target = [ToolSpec];
    fn deref(&self) -> &[ToolSpec] {
        &self.specs
    }
}

impl std::fmt::Debug for ToolList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.specs.iter()).finish()
    }
}

impl PartialEq for ToolList {
    fn eq(&self, other: &Self) -> bool {
        self.specs == other.specs
    }
}

impl Serialize for ToolList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.specs.serialize(s)
    }
}

impl<'de> Deserialize<'de> for ToolList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<ToolSpec>::deserialize(d).map(ToolList::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(id: &str) -> ToolSpec {
        serde_json::from_value(json!({"id": id, "description": "d", "parameters": {}})).unwrap()
    }

    #[test]
    fn each_wire_is_written_once_per_shared_list() {
        let list = ToolList::from(vec![spec("a"), spec("b")]);
        let clone = list.clone();
        let mut writes = 0;
        for l in [&list, &clone] {
            let json = l
                .wire_json(Wire::OpenAi, |s| {
                    writes += 1;
                    serde_json::value::to_raw_value(&s.len())
                })
                .unwrap();
            assert_eq!(json.get(), "2");
        }
        assert_eq!(writes, 1);
        let other = list
            .wire_json(Wire::Anthropic, |_| serde_json::value::to_raw_value("x"))
            .unwrap();
        assert_eq!(other.get(), "\"x\"");
        assert!(list.same_list(&clone));
        let equal = ToolList::from(vec![spec("a"), spec("b")]);
        assert!(!list.same_list(&equal) && list == equal);
    }
}
