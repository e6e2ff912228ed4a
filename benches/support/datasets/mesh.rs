//! `mesh`: 125 000 triangles of a 3D mesh.
//!
//! Each triangle: three vertices and a normal, each three `f32` uniform in
//! `[0, 1)`. Nothing but floats: MessagePack spends five bytes on each
//! (`0xca` and four bytes, big-endian) and one on each array header.

use codecbus::MessageCodec;

use super::generate::Rng;

/// The number of triangles.
pub(crate) const TRIANGLES: usize = 125_000;

/// A point or a direction.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Copy,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct Vector3 {
    pub(crate) x: f32,
    pub(crate) y: f32,
    pub(crate) z: f32,
}

/// A triangle and its normal.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Copy,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct Triangle {
    pub(crate) v0: Vector3,
    pub(crate) v1: Vector3,
    pub(crate) v2: Vector3,
    pub(crate) normal: Vector3,
}

/// The dataset.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct Mesh {
    pub(crate) triangles: Vec<Triangle>,
}

fn vector(rng: &mut Rng) -> Vector3 {
    Vector3 {
        x: rng.f32(),
        y: rng.f32(),
        z: rng.f32(),
    }
}

/// The dataset, the same on every run.
pub(crate) fn generate(rng: &mut Rng) -> Mesh {
    Mesh {
        triangles: (0..TRIANGLES)
            .map(|_| Triangle {
                v0: vector(rng),
                v1: vector(rng),
                v2: vector(rng),
                normal: vector(rng),
            })
            .collect(),
    }
}
