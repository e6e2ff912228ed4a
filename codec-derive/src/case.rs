// `rename_all` rules, with serde's spellings and semantics: fields are
// written in snake_case in Rust and variants in PascalCase, and each rule
// says how to turn one into the wire name.

use std::fmt::{self, Display};

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum RenameRule {
    None,
    LowerCase,
    UpperCase,
    PascalCase,
    CamelCase,
    SnakeCase,
    ScreamingSnakeCase,
    KebabCase,
    ScreamingKebabCase,
}

use RenameRule::*;

static RULES: &[(&str, RenameRule)] = &[
    ("lowercase", LowerCase),
    ("UPPERCASE", UpperCase),
    ("PascalCase", PascalCase),
    ("camelCase", CamelCase),
    ("snake_case", SnakeCase),
    ("SCREAMING_SNAKE_CASE", ScreamingSnakeCase),
    ("kebab-case", KebabCase),
    ("SCREAMING-KEBAB-CASE", ScreamingKebabCase),
];

pub(crate) struct ParseError<'a> {
    unknown: &'a str,
}

/// Lowercase without separators: `"Camel_Case"` and `"camelcase"` agree.
fn normalize(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

impl Display for ParseError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown rename rule `rename_all = {:?}`", self.unknown)?;
        // Only a spelling slip maps to one rule unambiguously: the "snake"
        // family differs by more than case.
        let close: Vec<&str> = RULES
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| normalize(name) == normalize(self.unknown))
            .collect();
        if let [name] = close[..] {
            return write!(f, "; did you mean {name:?}?");
        }
        f.write_str(", expected one of ")?;
        for (i, (name, _)) in RULES.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{name:?}")?;
        }
        Ok(())
    }
}

/// The first character lowercased (ASCII only, as serde does), the rest
/// unchanged; safe on empty and non-ASCII input.
fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => {
            let mut out = String::with_capacity(s.len());
            out.push(first.to_ascii_lowercase());
            out.push_str(chars.as_str());
            out
        }
        Option::None => String::new(),
    }
}

impl RenameRule {
    pub(crate) fn from_str(s: &str) -> Result<Self, ParseError<'_>> {
        RULES
            .iter()
            .find(|(name, _)| *name == s)
            .map(|&(_, rule)| rule)
            .ok_or(ParseError { unknown: s })
    }

    /// The wire name of a variant written `variant` (PascalCase) in Rust.
    pub(crate) fn apply_to_variant(self, variant: &str) -> String {
        match self {
            None | PascalCase => variant.to_owned(),
            LowerCase => variant.to_ascii_lowercase(),
            UpperCase => variant.to_ascii_uppercase(),
            CamelCase => lower_first(variant),
            SnakeCase => {
                let mut snake = String::new();
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            ScreamingSnakeCase => SnakeCase.apply_to_variant(variant).to_ascii_uppercase(),
            KebabCase => SnakeCase.apply_to_variant(variant).replace('_', "-"),
            ScreamingKebabCase => ScreamingSnakeCase
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }

    /// The wire name of a field written `field` (snake_case) in Rust.
    pub(crate) fn apply_to_field(self, field: &str) -> String {
        match self {
            None | LowerCase | SnakeCase => field.to_owned(),
            UpperCase | ScreamingSnakeCase => field.to_ascii_uppercase(),
            PascalCase => {
                let mut pascal = String::new();
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(ch);
                    }
                }
                pascal
            }
            CamelCase => lower_first(&PascalCase.apply_to_field(field)),
            KebabCase => field.replace('_', "-"),
            ScreamingKebabCase => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants() {
        for &(original, lower, upper, camel, snake, screaming, kebab, screaming_kebab) in &[
            (
                "Outcome", "outcome", "OUTCOME", "outcome", "outcome", "OUTCOME", "outcome",
                "OUTCOME",
            ),
            (
                "VeryTasty",
                "verytasty",
                "VERYTASTY",
                "veryTasty",
                "very_tasty",
                "VERY_TASTY",
                "very-tasty",
                "VERY-TASTY",
            ),
            ("A", "a", "A", "a", "a", "A", "a", "A"),
            ("Z42", "z42", "Z42", "z42", "z42", "Z42", "z42", "Z42"),
        ] {
            assert_eq!(None.apply_to_variant(original), original);
            assert_eq!(LowerCase.apply_to_variant(original), lower);
            assert_eq!(UpperCase.apply_to_variant(original), upper);
            assert_eq!(PascalCase.apply_to_variant(original), original);
            assert_eq!(CamelCase.apply_to_variant(original), camel);
            assert_eq!(SnakeCase.apply_to_variant(original), snake);
            assert_eq!(ScreamingSnakeCase.apply_to_variant(original), screaming);
            assert_eq!(KebabCase.apply_to_variant(original), kebab);
            assert_eq!(
                ScreamingKebabCase.apply_to_variant(original),
                screaming_kebab
            );
        }
    }

    #[test]
    fn fields() {
        for &(original, upper, pascal, camel, screaming, kebab, screaming_kebab) in &[
            (
                "outcome", "OUTCOME", "Outcome", "outcome", "OUTCOME", "outcome", "OUTCOME",
            ),
            (
                "very_tasty",
                "VERY_TASTY",
                "VeryTasty",
                "veryTasty",
                "VERY_TASTY",
                "very-tasty",
                "VERY-TASTY",
            ),
            ("a", "A", "A", "a", "A", "a", "A"),
            ("z42", "Z42", "Z42", "z42", "Z42", "z42", "Z42"),
        ] {
            assert_eq!(None.apply_to_field(original), original);
            assert_eq!(LowerCase.apply_to_field(original), original);
            assert_eq!(UpperCase.apply_to_field(original), upper);
            assert_eq!(PascalCase.apply_to_field(original), pascal);
            assert_eq!(CamelCase.apply_to_field(original), camel);
            assert_eq!(SnakeCase.apply_to_field(original), original);
            assert_eq!(ScreamingSnakeCase.apply_to_field(original), screaming);
            assert_eq!(KebabCase.apply_to_field(original), kebab);
            assert_eq!(ScreamingKebabCase.apply_to_field(original), screaming_kebab);
        }
    }

    #[test]
    fn degenerate_input_does_not_panic() {
        assert_eq!(CamelCase.apply_to_field("_"), "");
        assert_eq!(CamelCase.apply_to_variant("Étoile"), "Étoile");
        assert_eq!(CamelCase.apply_to_field("ünter_see"), "ünterSee");
    }

    #[test]
    fn parse() {
        assert_eq!(RenameRule::from_str("camelCase").ok(), Some(CamelCase));
        let err = RenameRule::from_str("camelcase").err().unwrap().to_string();
        assert_eq!(
            err,
            "unknown rename rule `rename_all = \"camelcase\"`; did you mean \"camelCase\"?"
        );
        let err = RenameRule::from_str("Camel").err().unwrap().to_string();
        assert!(err.starts_with("unknown rename rule `rename_all = \"Camel\"`, expected one of"));
        assert!(err.ends_with("\"SCREAMING-KEBAB-CASE\""));
        // `snake_case` and `SCREAMING_SNAKE_CASE` normalize differently, but
        // `snakecase` and `SNAKE_CASE` both mean `snake_case`.
        assert!(
            RenameRule::from_str("SNAKE_CASE")
                .err()
                .unwrap()
                .to_string()
                .contains("\"snake_case\"")
        );
    }
}
