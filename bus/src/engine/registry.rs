// The codec registry: codec name <-> Rust type, built once at start from
// every `inventory` registration, then changed only by `register_codec` /
// `unregister_codec`. A codec's aliases (the names it had before a rename)
// resolve to it for decoding only: a name off the wire is looked up among
// the names first, then among the aliases, and each alias remembers
// whether a message used it yet (what the transport reports once).
//
// Local delivery never consults it on the hot path (the typed send already
// knows `T::transform`); interceptors read codec names from it, and a remote
// transport encodes by `TypeId` and decodes by name through it.

use std::any::TypeId;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicBool, Ordering};

use codecbus_core::CodecRegistration;

use crate::base::error::{RegistryError, RegistryErrorKind};
use crate::base::hash::AddressHasher;
use crate::transport::Named;

/// The maps are built from this process's registrations only (a name off
/// the wire is looked up, never inserted), so they take the fast hasher of
/// the address maps: a remote transport looks a codec up for every message.
type Map<K, V> = HashMap<K, V, BuildHasherDefault<AddressHasher>>;

#[derive(Default)]
pub(crate) struct Registry {
    by_name: Map<&'static str, CodecRegistration>,
    by_type: Map<TypeId, &'static str>,
    aliases: Map<&'static str, Alias>,
}

/// An old name of a codec.
struct Alias {
    /// The codec's current name.
    name: &'static str,
    /// Whether a message arrived under this alias yet.
    used: AtomicBool,
}

/// Codecs for the standard types, under short names. They give way to any
/// registration that uses the same name or type.
fn builtins() -> [CodecRegistration; 14] {
    [
        CodecRegistration::of::<String>("string"),
        CodecRegistration::of::<bool>("bool"),
        CodecRegistration::of::<char>("char"),
        CodecRegistration::of::<()>("unit"),
        CodecRegistration::of::<u8>("u8"),
        CodecRegistration::of::<u16>("u16"),
        CodecRegistration::of::<u32>("u32"),
        CodecRegistration::of::<u64>("u64"),
        CodecRegistration::of::<i8>("i8"),
        CodecRegistration::of::<i16>("i16"),
        CodecRegistration::of::<i32>("i32"),
        CodecRegistration::of::<i64>("i64"),
        CodecRegistration::of::<f32>("f32"),
        CodecRegistration::of::<f64>("f64"),
    ]
}

impl Registry {
    /// Every inventory registration plus `extra`; conflicts are errors.
    pub(crate) fn build(extra: &[CodecRegistration]) -> Result<Self, RegistryError> {
        let mut registry = Self::default();
        let all: Vec<CodecRegistration> = codecbus_core::registrations()
            .copied()
            .chain(extra.iter().copied())
            .collect();
        for reg in &all {
            registry.merge(*reg)?;
        }
        for reg in builtins() {
            if !registry.by_name.contains_key(reg.name())
                && !registry.aliases.contains_key(reg.name())
                && !registry.by_type.contains_key(&reg.type_id())
            {
                registry.insert(reg);
            }
        }
        Ok(registry)
    }

    /// Adds `reg` at build time: the same (name, type) twice is fine (the
    /// aliases of both count), a clash on either side is an error naming
    /// both parties, and so is an alias that another codec's name or alias
    /// already is.
    fn merge(&mut self, reg: CodecRegistration) -> Result<(), RegistryError> {
        let kind = RegistryErrorKind::NameConflict;
        if let Some(existing) = self.by_name.get(reg.name()) {
            if existing.type_id() != reg.type_id() {
                return Err(RegistryError::new(
                    kind,
                    format!(
                        "codec name {:?} is registered for two types: `{}` and `{}`",
                        reg.name(),
                        existing.type_name(),
                        reg.type_name()
                    ),
                ));
            }
        } else {
            self.check_name_free(&reg, kind)?;
            self.check_type_free(&reg)?;
        }
        self.check_aliases_free(&reg, kind)?;
        if !self.by_name.contains_key(reg.name()) {
            self.insert(reg);
        }
        self.insert_aliases(&reg);
        Ok(())
    }

    /// `reg`'s name is no other codec's alias.
    fn check_name_free(
        &self,
        reg: &CodecRegistration,
        kind: RegistryErrorKind,
    ) -> Result<(), RegistryError> {
        match self.aliases.get(reg.name()) {
            Some(alias) if alias.name != reg.name() => Err(RegistryError::new(
                kind,
                format!(
                    "codec name {:?} of `{}` is an alias of the codec {:?} of `{}`",
                    reg.name(),
                    reg.type_name(),
                    alias.name,
                    self.type_name_of(alias.name)
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Each alias of `reg` is no other codec's name or alias (its own
    /// name, or an alias it has already, is no clash).
    fn check_aliases_free(
        &self,
        reg: &CodecRegistration,
        kind: RegistryErrorKind,
    ) -> Result<(), RegistryError> {
        for &alias in reg.aliases() {
            if alias == reg.name() {
                continue;
            }
            if let Some(other) = self.by_name.get(alias) {
                return Err(RegistryError::new(
                    kind,
                    format!(
                        "codec alias {alias:?} of the codec {:?} of `{}` is the name of the codec of `{}`",
                        reg.name(),
                        reg.type_name(),
                        other.type_name()
                    ),
                ));
            }
            if let Some(other) = self.aliases.get(alias)
                && other.name != reg.name()
            {
                return Err(RegistryError::new(
                    kind,
                    format!(
                        "codec alias {alias:?} is given to two codecs: {:?} of `{}` and {:?} of `{}`",
                        other.name,
                        self.type_name_of(other.name),
                        reg.name(),
                        reg.type_name()
                    ),
                ));
            }
        }
        Ok(())
    }

    fn type_name_of(&self, name: &str) -> &'static str {
        self.by_name
            .get(name)
            .map_or("(unregistered)", CodecRegistration::type_name)
    }

    fn insert_aliases(&mut self, reg: &CodecRegistration) {
        for &alias in reg.aliases() {
            if alias != reg.name() {
                self.aliases.entry(alias).or_insert(Alias {
                    name: reg.name(),
                    used: AtomicBool::new(false),
                });
            }
        }
    }

    fn check_type_free(&self, reg: &CodecRegistration) -> Result<(), RegistryError> {
        match self.by_type.get(&reg.type_id()) {
            Some(name) => Err(RegistryError::new(
                RegistryErrorKind::TypeTaken,
                format!(
                    "type `{}` is registered under two codec names: {:?} and {:?}",
                    reg.type_name(),
                    name,
                    reg.name()
                ),
            )),
            None => Ok(()),
        }
    }

    fn insert(&mut self, reg: CodecRegistration) {
        self.by_type.insert(reg.type_id(), reg.name());
        self.by_name.insert(reg.name(), reg);
    }

    /// Adds `reg` on a running bus: any existing use of the name is an
    /// error, as in Vert.x.
    /// The name and aliases of another codec are taken too.
    pub(crate) fn register(&mut self, reg: CodecRegistration) -> Result<(), RegistryError> {
        if self.by_name.contains_key(reg.name()) {
            return Err(RegistryError::new(
                RegistryErrorKind::NameTaken,
                format!("Already a codec registered with name {}", reg.name()),
            ));
        }
        self.check_name_free(&reg, RegistryErrorKind::NameTaken)?;
        self.check_type_free(&reg)?;
        self.check_aliases_free(&reg, RegistryErrorKind::NameTaken)?;
        self.insert(reg);
        self.insert_aliases(&reg);
        Ok(())
    }

    /// Removes the codec `name` and its aliases.
    pub(crate) fn unregister(&mut self, name: &str) -> Option<CodecRegistration> {
        let reg = self.by_name.remove(name)?;
        self.by_type.remove(&reg.type_id());
        self.aliases.retain(|_, alias| alias.name != reg.name());
        Some(reg)
    }

    /// The codec registered as `name`: its current name, not an alias.
    pub(crate) fn by_name(&self, name: &str) -> Option<CodecRegistration> {
        self.by_name.get(name).copied()
    }

    /// The codec named `name` now, or once (one of its aliases); a lookup,
    /// which does not count as a message under the alias.
    pub(crate) fn by_name_or_alias(&self, name: &str) -> Option<CodecRegistration> {
        self.by_name(name).or_else(|| {
            let alias = self.aliases.get(name)?;
            self.by_name(alias.name)
        })
    }

    /// The codec a message names, by its name or by one of its aliases;
    /// the first message under each alias is told apart.
    pub(crate) fn resolve(&self, name: &str) -> Option<(CodecRegistration, Named)> {
        if let Some(reg) = self.by_name.get(name) {
            return Some((*reg, Named::Name));
        }
        self.resolve_alias(name)
    }

    #[cold]
    fn resolve_alias(&self, name: &str) -> Option<(CodecRegistration, Named)> {
        let alias = self.aliases.get(name)?;
        let reg = self.by_name.get(alias.name)?;
        let first = !alias.used.swap(true, Ordering::Relaxed);
        Some((*reg, Named::Alias { first }))
    }

    pub(crate) fn by_type(&self, type_id: TypeId) -> Option<CodecRegistration> {
        self.by_type
            .get(&type_id)
            .and_then(|name| self.by_name.get(name))
            .copied()
    }

    pub(crate) fn name_of(&self, type_id: TypeId) -> Option<&'static str> {
        self.by_type.get(&type_id).copied()
    }

    /// Every codec, sorted by name.
    pub(crate) fn list(&self) -> Vec<CodecRegistration> {
        let mut all: Vec<_> = self.by_name.values().copied().collect();
        all.sort_unstable_by_key(|r| r.name());
        all
    }
}
