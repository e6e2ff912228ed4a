//! `rust_decimal::Decimal` as extension type 2: the scale as a MessagePack
//! unsigned integer, then the unscaled value as minimal big-endian two's
//! complement (the Apache Ignite 3 layout).

use std::sync::Arc;

use rust_decimal::Decimal;

use super::{DECIMAL, read_ext_of};
use crate::codec::{Decode, Encode, Immutable, MessageCodec, MessageType};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::msgpack::read::Reader;
use crate::msgpack::write::Writer;
use crate::shape::Shape;

impl Immutable for Decimal {}

/// The largest scale `rust_decimal` supports.
const MAX_SCALE: u32 = 28;

/// Minimal big-endian two's complement of `v` (at least one byte).
fn twos_complement(v: i128) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        if (b == 0x00 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    bytes[start..].to_vec()
}

impl Encode for Decimal {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        let mut payload = Writer::new();
        payload.write_u64(u64::from(self.scale()));
        payload.write_raw(&twos_complement(self.mantissa()));
        w.write_ext(DECIMAL, payload.as_slice())
    }
}

impl<'de> Decode<'de> for Decimal {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let at = r.position();
        let data = read_ext_of(r, DECIMAL)?;
        let invalid = |what| DecodeError::new(DecodeErrorKind::InvalidExtData(what), at);
        let mut inner = Reader::new(data);
        let scale = inner
            .read_u32()
            .map_err(|_| invalid("a decimal starts with its scale as an unsigned integer"))?;
        if scale > MAX_SCALE {
            return Err(invalid("decimal scale above 28"));
        }
        let digits = &data[inner.position()..];
        if digits.is_empty() || digits.len() > 16 {
            return Err(invalid("decimal unscaled value must be 1 to 16 bytes"));
        }
        let fill = if digits[0] & 0x80 != 0 { 0xff } else { 0x00 };
        let mut wide = [fill; 16];
        wide[16 - digits.len()..].copy_from_slice(digits);
        let mantissa = i128::from_be_bytes(wide);
        Decimal::try_from_i128_with_scale(mantissa, scale)
            .map_err(|_| invalid("decimal unscaled value exceeds 96 bits"))
    }
}

impl MessageType for Decimal {}
impl MessageCodec for Decimal {
    const IMMUTABLE: bool = true;
    crate::impls::copy_by_clone!();
    crate::impls::describe!(Shape::Ext(DECIMAL));
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        Arc::clone(body)
    }
}

#[cfg(test)]
mod tests {
    use super::twos_complement;

    #[test]
    fn minimal_twos_complement() {
        assert_eq!(twos_complement(0), [0x00]);
        assert_eq!(twos_complement(127), [0x7f]);
        assert_eq!(twos_complement(128), [0x00, 0x80]);
        assert_eq!(twos_complement(-1), [0xff]);
        assert_eq!(twos_complement(-128), [0x80]);
        assert_eq!(twos_complement(-129), [0xff, 0x7f]);
        assert_eq!(twos_complement(i128::MIN).len(), 16);
    }
}
