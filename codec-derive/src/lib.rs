//! `#[derive(MessageCodec)]` for codecbus (documentation in progress).

mod ast;
mod attr;
mod case;
mod ctxt;
mod decode;
mod encode;
mod expand;
mod fallback;
mod register;
mod symbol;
mod transform;
mod valid;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `codec_core::MessageCodec`.
#[proc_macro_derive(MessageCodec, attributes(codec))]
pub fn derive_message_codec(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}
