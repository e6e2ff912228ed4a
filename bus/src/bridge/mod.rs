//! The Vert.x event bus bridge (feature `bridge`).
#![cfg_attr(docsrs, doc(cfg(feature = "bridge")))]
