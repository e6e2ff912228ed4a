//! The four datasets of the public Rust serialization benchmark
//! (djkoloski/rust_serialization_benchmark): `log`, `mesh`,
//! `minecraft_savedata` and `mk48`, with the same shapes, sizes and value
//! distributions, written here from its description of them and drawn from
//! a generator of our own ([`generate::Rng`], seeded): statistically the
//! same data, not the same bytes.
//!
//! Every type derives the codecs of the five implementations the
//! `datasets` bench compares: `MessageCodec` (codecbus), serde
//! (rmp-serde), zerompk's, msgpacker's and bitcode's. Structs are
//! positional wherever the crate allows a choice: `#[codec(as_array)]` is
//! the layout `rmp_serde::to_vec` writes (arrays of fields, enums by
//! variant name, `None` as `nil`, tuples and fixed arrays as arrays,
//! integers in their smallest form, non-negative ones unsigned), and
//! zerompk's default is the same but for two things: a signed field is
//! always in a signed form (`int 16` for an `i16` of 200, where rmp-serde
//! writes `uint 8`), and a `Vec<u8>` is a `bin`. msgpacker writes a
//! struct's fields one after another with no header, an enum as its index
//! and a `Vec<u8>` marked `binary` as a `bin`; bitcode is a bit-packed
//! format of its own. Each dataset's module says where its layouts part.
//!
//! The datasets with strings (`log`, `minecraft_savedata`) also have a
//! view ([`Borrowable`]) whose strings point into the input.

pub(crate) mod generate;
pub(crate) mod log;
pub(crate) mod mesh;
pub(crate) mod minecraft_savedata;
pub(crate) mod mk48;

/// A dataset with a borrowed form: the same values, its strings `&str`
/// into the bytes it was decoded from. It encodes to the same bytes.
pub(crate) trait Borrowable {
    /// The borrowed form.
    type View<'a>: PartialEq
    where
        Self: 'a;

    /// The borrowed form of `self`, to compare with what a decoder reads.
    fn view(&self) -> Self::View<'_>;
}

/// The names of the datasets, in the order they run.
pub(crate) const NAMES: [&str; 4] = ["log", "mesh", "minecraft_savedata", "mk48"];
