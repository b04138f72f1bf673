//! The league's packets as prost types (`proto/ssl.proto`); only
//! [`super::packets`] reads them.

#![allow(missing_docs, clippy::all, clippy::pedantic)]

include!(concat!(env!("OUT_DIR"), "/underlay.ssl.rs"));
