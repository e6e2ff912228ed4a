//! `#[derive(MessageCodec)]` for codecbus (work in progress).

use proc_macro::TokenStream;

/// Derives `codec_core::MessageCodec`.
#[proc_macro_derive(MessageCodec, attributes(codec))]
pub fn derive_message_codec(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}
