//! `uuid::Uuid` as extension type 3: 16 bytes in RFC 4122 order.

use std::sync::Arc;

use super::{UUID, read_ext_of};
use crate::codec::{Decode, Encode, Immutable, MessageCodec, MessageType};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::msgpack::read::Reader;
use crate::msgpack::write::Writer;
use crate::shape::Shape;

impl Immutable for uuid::Uuid {}

impl Encode for uuid::Uuid {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_ext(UUID, self.as_bytes())
    }
}

impl<'de> Decode<'de> for uuid::Uuid {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let at = r.position();
        let data = read_ext_of(r, UUID)?;
        uuid::Uuid::from_slice(data).map_err(|e| {
            DecodeError::new(DecodeErrorKind::InvalidExtData("a UUID is 16 bytes"), at)
                .with_source(e)
        })
    }
}

impl MessageType for uuid::Uuid {}
impl MessageCodec for uuid::Uuid {
    const IMMUTABLE: bool = true;
    crate::impls::copy_by_clone!();
    crate::impls::describe!(Shape::Ext(UUID));
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        Arc::clone(body)
    }
}
