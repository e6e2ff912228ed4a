use codecbus_core::{MessageCodec, from_slice};

#[derive(MessageCodec)]
struct View<'a> {
    name: &'a str,
}

// The view cannot outlive the bytes it borrows from.
fn decode() -> View<'static> {
    let bytes = vec![0x81, 0xa4, b'n', b'a', b'm', b'e', 0xa1, b'x'];
    from_slice(&bytes).unwrap()
}

fn main() {
    let _ = decode();
}
