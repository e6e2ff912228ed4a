// LZ4 compression of large bodies between nodes: a body over the
// transport's threshold leaves as one LZ4 block after a mark and its size,
// right after the codec prefix; a node reads compressed and plain bodies
// alike. The size is checked against the transport's limit before anything
// is allocated, so a small message declaring a huge body is refused, not
// inflated.

use codecbus_core::{Reader, Writer};

/// After the codec prefix, a body starting with this byte is compressed:
/// `0xC1` starts no MessagePack value (the same byte as the codec prefix's
/// mark). The body's size follows as a MessagePack uint, then the body as
/// one LZ4 block.
pub(crate) const COMPRESSED: u8 = 0xC1;

/// `payload` with its body (from `body_at`) compressed: the prefix kept,
/// then the mark, the body's size and the LZ4 block. `None` when that is
/// not smaller than `payload`.
pub(crate) fn compress(payload: &[u8], body_at: usize) -> Option<Vec<u8>> {
    let body = payload.get(body_at..)?;
    let bound = lz4_flex::block::get_maximum_output_size(body.len());
    let mut head = Vec::with_capacity(body_at + 10 + bound);
    head.extend_from_slice(&payload[..body_at]);
    head.push(COMPRESSED);
    let mut w = Writer::from_vec(head);
    w.write_u64(body.len() as u64);
    let mut out = w.into_vec();
    let start = out.len();
    out.resize(start + bound, 0);
    let written = lz4_flex::block::compress_into(body, &mut out[start..]).ok()?;
    out.truncate(start + written);
    (out.len() < payload.len()).then_some(out)
}

/// The body of a compressed payload, from `rest` (what follows the mark):
/// its declared size, refused over `limit` before anything is allocated,
/// then the block decompressed to exactly that size.
pub(crate) fn decompress(rest: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let mut r = Reader::new(rest);
    let declared = r
        .read_u64()
        .map_err(|e| format!("compressed body without its size: {e}"))?;
    let size = usize::try_from(declared)
        .ok()
        .filter(|&size| size <= limit)
        .ok_or_else(|| {
            format!(
                "compressed body declares {declared} bytes, over the limit of {limit} bytes (max_payload): refused without decompressing"
            )
        })?;
    let block = &rest[r.position()..];
    let mut body = vec![0; size];
    let written = lz4_flex::block::decompress_into(block, &mut body).map_err(|e| {
        format!(
            "compressed body of {} bytes cannot be decompressed: {e}",
            block.len()
        )
    })?;
    if written != size {
        return Err(format!(
            "compressed body decompressed to {written} bytes, not the {size} it declares"
        ));
    }
    Ok(body)
}
