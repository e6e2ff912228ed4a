use codecbus_core::MessageCodec;

mod as_text {
    pub fn encode(_: &u8, _: &mut codecbus_core::Writer) -> Result<(), codecbus_core::EncodeError> {
        Ok(())
    }
    pub fn decode(_: &mut codecbus_core::Reader<'_>) -> Result<u8, codecbus_core::DecodeError> {
        Ok(0)
    }
}

#[derive(MessageCodec, Clone)]
struct Order {
    #[codec(serde, with = "as_text")]
    id: u8,
    #[codec(bytes, serde)]
    key: Vec<u8>,
}

fn main() {}
