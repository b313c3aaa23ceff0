//! YAML from a pull request, parsed within a budget: aliases are expanded by the parser, so a
//! 70 KB file of nested aliases ("billion laughs") became a 1 GiB value. The nodes are counted
//! as the parser expands them, without building anything, and a document past the cap is
//! refused before it is built.

use serde::de::{
    DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use std::cell::Cell;
use std::fmt;

/// The most nodes (scalars, sequences, mappings, aliases expanded) one document may have. The
/// largest real workflows have a few thousand.
pub(crate) const MAX_NODES: usize = 200_000;

/// Where in a file, and why, it could not be parsed.
pub(crate) type YamlError = ((usize, usize), String);

/// The document of `text` as a YAML value, aliases expanded, or where and why not.
pub(crate) fn parse(text: &str) -> Result<yaml_serde::Value, YamlError> {
    let located = |e: yaml_serde::Error| {
        let at = e.location().map_or((1, 1), |l| (l.line(), l.column()));
        (at, e.to_string())
    };
    let left = Cell::new(MAX_NODES);
    if let Err(e) = Budget(&left).deserialize(yaml_serde::Deserializer::from_str(text)) {
        // The parser's own guard (100 alias jumps per event) says "repetition limit exceeded".
        let expanded = left.get() == 0 || e.to_string().contains("repetition limit");
        return Err(if expanded {
            (
                (1, 1),
                format!(
                    "more than {MAX_NODES} YAML nodes once its aliases are expanded: not audited"
                ),
            )
        } else {
            located(e)
        });
    }
    yaml_serde::from_str(text).map_err(located)
}

/// Spends one node of the budget per value visited.
struct Budget<'a>(&'a Cell<usize>);

impl Budget<'_> {
    fn spend<E: serde::de::Error>(&self) -> Result<(), E> {
        match self.0.get() {
            0 => Err(E::custom("too many nodes")),
            n => {
                self.0.set(n - 1);
                Ok(())
            }
        }
    }
}

impl<'de> DeserializeSeed<'de> for Budget<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Budget<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        self.spend()
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        self.spend()
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        self.spend()
    }
    fn visit_i128<E: serde::de::Error>(self, _: i128) -> Result<(), E> {
        self.spend()
    }
    fn visit_u128<E: serde::de::Error>(self, _: u128) -> Result<(), E> {
        self.spend()
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        self.spend()
    }
    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<(), E> {
        self.spend()
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.spend()
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        self.spend()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.spend()?;
        Budget(self.0).deserialize(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        Budget(self.0).deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.spend()?;
        while seq.next_element_seed(Budget(self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.spend()?;
        while map.next_key_seed(Budget(self.0))?.is_some() {
            map.next_value_seed(Budget(self.0))?;
        }
        Ok(())
    }
    /// A tagged value (`!tag value`).
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        self.spend()?;
        let ((), variant) = data.variant_seed(Budget(self.0))?;
        variant.newtype_variant_seed(Budget(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_count_once_per_use_and_a_bomb_is_refused() {
        let ok = "a: &x [1, 2, 3]\nb: *x\nc: !tag {k: v}\n";
        assert_eq!(parse(ok).unwrap()["b"], parse(ok).unwrap()["a"]);
        let refused = |bomb: &str| {
            let (at, why) = parse(bomb).unwrap_err();
            assert_eq!(at, (1, 1));
            assert_eq!(
                why,
                "more than 200000 YAML nodes once its aliases are expanded: not audited"
            );
        };
        // 2,000 scalars used 300 times: 600,000 nodes from 8 KB, few alias jumps (the budget).
        let scalars = vec!["x"; 2000].join(", ");
        let uses = vec!["*l0"; 300].join(", ");
        refused(&format!("l0: &l0 [{scalars}]\nl1: [{uses}]\n"));
        // Nine levels of ten aliases: 10^9 nodes from 300 bytes (the parser's own guard).
        let mut bomb = String::from("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            let p = i - 1;
            bomb.push_str(&format!(
                "l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"
            ));
        }
        refused(&bomb);
        // A syntax error keeps its place.
        assert_eq!(parse("a: [1,\n").unwrap_err().0 .0, 2);
    }
}
