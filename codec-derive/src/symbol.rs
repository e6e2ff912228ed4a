// One spelling per attribute key, compared against parsed paths so that a
// typo in this file cannot make two places disagree.

use std::fmt::{self, Display};

use syn::{Ident, Path};

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) struct Symbol(pub(crate) &'static str);

pub(crate) const CODEC: Symbol = Symbol("codec");

// container
pub(crate) const ALIASES: Symbol = Symbol("aliases");
pub(crate) const AS_ARRAY: Symbol = Symbol("as_array");
pub(crate) const BOUND: Symbol = Symbol("bound");
pub(crate) const CRATE: Symbol = Symbol("crate");
pub(crate) const IMMUTABLE: Symbol = Symbol("immutable");
pub(crate) const NAME: Symbol = Symbol("name");
pub(crate) const RENAME_ALL: Symbol = Symbol("rename_all");
pub(crate) const RESERVED: Symbol = Symbol("reserved");
pub(crate) const UNION: Symbol = Symbol("union");
pub(crate) const UNREGISTERED: Symbol = Symbol("unregistered");

// field (and `rename` on variants)
pub(crate) const BYTES: Symbol = Symbol("bytes");
pub(crate) const DEFAULT: Symbol = Symbol("default");
pub(crate) const KEY: Symbol = Symbol("key");
pub(crate) const RENAME: Symbol = Symbol("rename");
pub(crate) const SERDE: Symbol = Symbol("serde");
pub(crate) const SKIP: Symbol = Symbol("skip");
pub(crate) const SKIP_IF: Symbol = Symbol("skip_if");
pub(crate) const WITH: Symbol = Symbol("with");

// variant
pub(crate) const OTHER: Symbol = Symbol("other");
pub(crate) const TAG: Symbol = Symbol("tag");

impl PartialEq<Symbol> for Ident {
    fn eq(&self, word: &Symbol) -> bool {
        self == word.0
    }
}

impl PartialEq<Symbol> for &Ident {
    fn eq(&self, word: &Symbol) -> bool {
        *self == word.0
    }
}

impl PartialEq<Symbol> for Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl PartialEq<Symbol> for &Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}
