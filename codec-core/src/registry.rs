//! The registration record each derived codec submits through `inventory`.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use crate::codec::MessageCodec;
use crate::error::{DecodeError, EncodeError};
use crate::msgpack::read::Reader;
use crate::msgpack::write::Writer;
use crate::shape::{CodecShape, Definitions, Shape};

/// A type-erased message body, as the bus holds it.
pub type AnyBody = Arc<dyn Any + Send + Sync>;

/// Everything a bus needs to carry one message type by name: its codec
/// name, Rust type, type-erased encode, decode and transform, and its
/// [shape](Self::shape).
///
/// `#[derive(MessageCodec)]` submits one for every non-generic type; a bus
/// collects them all when it is built (see [`registrations`]). Build one by
/// hand with [`CodecRegistration::of`] for a hand-written codec, and add the
/// names it was known by before with [`with_aliases`](Self::with_aliases).
///
/// The name travels with every message between processes, and the
/// receiving node decodes by it: give types that cross processes a name of
/// their own (`#[codec(name = "shop.order.v1")]`) rather than the derive's
/// default (the module path and the type name), which changes whenever the
/// type moves to another module, and then differs between the nodes of a
/// rolling deploy.
///
/// # Examples
///
/// ```
/// use codecbus_core::{CodecRegistration, MessageCodec};
///
/// #[derive(MessageCodec, Clone)]
/// #[codec(name = "ping")]
/// struct Ping;
///
/// let reg = codecbus_core::registrations().find(|r| r.name() == "ping").unwrap();
/// assert_eq!(reg.type_id(), std::any::TypeId::of::<Ping>());
/// assert!(!reg.is_immutable());
/// ```
#[derive(Clone, Copy)]
pub struct CodecRegistration {
    name: &'static str,
    aliases: &'static [&'static str],
    immutable: bool,
    type_name: fn() -> &'static str,
    type_id: fn() -> TypeId,
    encode: fn(&(dyn Any + Send + Sync), &mut Writer) -> Result<(), EncodeError>,
    decode: fn(&mut Reader<'_>) -> Result<AnyBody, DecodeError>,
    transform: fn(&AnyBody) -> AnyBody,
    shape: fn(&mut Definitions) -> Shape,
}

impl CodecRegistration {
    /// The registration of `T` under the codec name `name`.
    pub const fn of<T>(name: &'static str) -> Self
    where
        T: MessageCodec + Send + Sync + 'static,
    {
        Self {
            name,
            aliases: &[],
            immutable: T::IMMUTABLE,
            type_name: std::any::type_name::<T>,
            type_id: TypeId::of::<T>,
            encode: encode_erased::<T>,
            decode: decode_erased::<T>,
            transform: transform_erased::<T>,
            shape: T::shape,
        }
    }

    /// The same registration, also known by the codec names `aliases`: the
    /// names the type was registered under before a rename.
    ///
    /// A bus decodes a message that arrives under an alias as this type (a
    /// message from a node still running the older build), and always
    /// sends under [`name`](Self::name). An alias that is another codec's
    /// name or alias makes the bus's build fail; one equal to this
    /// registration's own name, or given twice, changes nothing. The
    /// derive's `#[codec(aliases("..."))]` calls this.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_core::CodecRegistration;
    ///
    /// // `Vec<u32>` was registered as "numbers", and is now "numbers.v2".
    /// const NUMBERS: CodecRegistration =
    ///     CodecRegistration::of::<Vec<u32>>("numbers.v2").with_aliases(&["numbers"]);
    /// assert_eq!(NUMBERS.name(), "numbers.v2");
    /// assert_eq!(NUMBERS.aliases(), ["numbers"]);
    /// ```
    pub const fn with_aliases(self, aliases: &'static [&'static str]) -> Self {
        Self { aliases, ..self }
    }

    /// The codec name (the wire name of the type).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The codec names this type was known by before (see
    /// [`with_aliases`](Self::with_aliases)); empty unless some were given.
    /// A bus decodes a message named by one of them as this type, and
    /// never sends under them.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_core::MessageCodec;
    ///
    /// #[derive(MessageCodec, Clone)]
    /// #[codec(name = "billing.invoice.v2", aliases("billing::invoices::Invoice", "billing.invoice"))]
    /// struct Invoice {
    ///     id: u64,
    /// }
    ///
    /// let reg = codecbus_core::registrations()
    ///     .find(|r| r.name() == "billing.invoice.v2")
    ///     .unwrap();
    /// assert_eq!(reg.aliases(), ["billing::invoices::Invoice", "billing.invoice"]);
    /// ```
    pub fn aliases(&self) -> &'static [&'static str] {
        self.aliases
    }

    /// What the codec writes, as data: its name and aliases, the type's
    /// [`MessageCodec::shape`] and the shapes of the named codecs it
    /// refers to (see [`shape`](crate::shape)). Built on each call.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_core::MessageCodec;
    ///
    /// #[derive(MessageCodec, Clone)]
    /// #[codec(name = "billing.refund", aliases("billing.refund.v0"))]
    /// struct Refund {
    ///     cents: u64,
    /// }
    ///
    /// let reg = codecbus_core::registrations()
    ///     .find(|r| r.name() == "billing.refund")
    ///     .unwrap();
    /// assert_eq!(
    ///     reg.shape().canonical_json(),
    ///     r#"{"aliases":["billing.refund.v0"],"name":"billing.refund","refs":{},"shape":{"record":{"fields":[{"name":"cents","optional":false,"shape":"u64"}],"layout":"map","reserved":[]}}}"#
    /// );
    /// ```
    pub fn shape(&self) -> CodecShape {
        CodecShape::from_parts(self.name, self.aliases, self.shape)
    }

    /// Whether local delivery shares the body instead of copying it.
    pub fn is_immutable(&self) -> bool {
        self.immutable
    }

    /// The Rust type's name, as `std::any::type_name` gives it.
    pub fn type_name(&self) -> &'static str {
        (self.type_name)()
    }

    /// The Rust type's id.
    pub fn type_id(&self) -> TypeId {
        (self.type_id)()
    }

    /// Encodes a body of this type.
    ///
    /// # Errors
    ///
    /// As [`Encode::encode`](crate::Encode::encode); a [`Custom`](crate::EncodeErrorKind::Custom)
    /// error when `body` is of another type.
    pub fn encode(
        &self,
        body: &(dyn Any + Send + Sync),
        w: &mut Writer,
    ) -> Result<(), EncodeError> {
        (self.encode)(body, w)
    }

    /// Decodes a body of this type.
    ///
    /// # Errors
    ///
    /// As [`Decode::decode`](crate::Decode::decode).
    pub fn decode(&self, r: &mut Reader<'_>) -> Result<AnyBody, DecodeError> {
        (self.decode)(r)
    }

    /// Applies the type's local-delivery transform to a body of this type.
    ///
    /// # Panics
    ///
    /// Never for a body of this registration's type; a body of another type
    /// is returned shared, unchanged.
    pub fn transform(&self, body: &AnyBody) -> AnyBody {
        (self.transform)(body)
    }
}

impl fmt::Debug for CodecRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodecRegistration")
            .field("name", &self.name)
            .field("aliases", &self.aliases)
            .field("type_name", &self.type_name())
            .field("immutable", &self.immutable)
            .finish()
    }
}

fn encode_erased<T: MessageCodec + 'static>(
    body: &(dyn Any + Send + Sync),
    w: &mut Writer,
) -> Result<(), EncodeError> {
    match body.downcast_ref::<T>() {
        Some(v) => v.encode(w),
        None => Err(EncodeError::custom(format_args!(
            "body is not a {}",
            std::any::type_name::<T>()
        ))),
    }
}

fn decode_erased<T: MessageCodec + Send + Sync + 'static>(
    r: &mut Reader<'_>,
) -> Result<AnyBody, DecodeError> {
    T::decode(r).map(|v| Arc::new(v) as AnyBody)
}

fn transform_erased<T: MessageCodec + Send + Sync + 'static>(body: &AnyBody) -> AnyBody {
    match Arc::clone(body).downcast::<T>() {
        Ok(typed) => T::transform(&typed),
        Err(same) => same,
    }
}

inventory::collect!(CodecRegistration);

/// Every registration linked into this program, in unspecified order.
///
/// Only crates that are linked in contribute: a type defined in a library
/// the binary never references is not registered.
pub fn registrations() -> impl Iterator<Item = &'static CodecRegistration> {
    inventory::iter::<CodecRegistration>.into_iter()
}

impl crate::shape::CodecShape {
    /// The shape of `T` registered as the codec `name`.
    pub fn of<T: MessageCodec>(name: &str) -> Self {
        Self::from_parts(name, &[], T::shape)
    }
}
