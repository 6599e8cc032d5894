//! Compressed request bodies (`Content-Encoding`). The body middleware ([`crate::body_limits`])
//! decodes a body here before its checks, so that a compressed body meets the same NUL,
//! depth and size rules as a plain one, and hands the decoded body on with the header
//! removed (nothing after it decodes again). The decoded size is bounded while decoding:
//! a small body that inflates past the limit (a "gzip bomb") stops at the limit and is a
//! 413, never a large allocation.
//!
//! `gzip` (and its old name `x-gzip`) and `deflate` (zlib, as HTTP defines it) are what
//! actix itself would decode with the `compress-gzip` feature; any other coding, or a
//! chain of codings, is a 415.

use std::io::Read;

use flate2::read::{MultiGzDecoder, ZlibDecoder};

/// Why a body could not be decoded.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("Unsupported Media Type: Content-Encoding {0:?} is not supported (gzip or deflate)")]
    Unsupported(String),
    #[error("Invalid body: it is not valid {0} data")]
    Corrupt(&'static str),
    /// Decoded, the body is larger than the limit.
    #[error("Payload Too Large")]
    TooLarge,
}

/// A `Content-Encoding` this service decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Identity,
    Gzip,
    Deflate,
}

impl Coding {
    /// The coding a header names; `None` (no header) is `identity`.
    pub fn parse(header: Option<&[u8]>) -> Result<Self, DecodeError> {
        let Some(raw) = header else {
            return Ok(Self::Identity);
        };
        let text = String::from_utf8_lossy(raw);
        match text.trim().to_ascii_lowercase().as_str() {
            "" | "identity" => Ok(Self::Identity),
            "gzip" | "x-gzip" => Ok(Self::Gzip),
            "deflate" => Ok(Self::Deflate),
            _ => Err(DecodeError::Unsupported(text.chars().take(40).collect())),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Identity => "identity",
            Self::Gzip => "gzip",
            Self::Deflate => "deflate",
        }
    }
}

/// `body` decoded, at most `limit` bytes of it, or `None` when it is not encoded (identity,
/// or empty: a request with no body may still carry the header).
pub fn decode(coding: Coding, body: &[u8], limit: usize) -> Result<Option<Vec<u8>>, DecodeError> {
    if coding == Coding::Identity || body.is_empty() {
        return Ok(None);
    }
    let reader: Box<dyn Read + '_> = match coding {
        Coding::Gzip => Box::new(MultiGzDecoder::new(body)),
        Coding::Deflate => Box::new(ZlibDecoder::new(body)),
        Coding::Identity => return Ok(None),
    };
    // One byte past the limit tells "exactly the limit" from "more".
    let mut decoded = Vec::new();
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut decoded)
        .map_err(|_| DecodeError::Corrupt(coding.name()))?;
    if decoded.len() > limit {
        return Err(DecodeError::TooLarge);
    }
    Ok(Some(decoded))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::Compression;
    use flate2::write::{GzEncoder, ZlibEncoder};

    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn codings_are_read_case_blind_and_others_refused() {
        assert_eq!(Coding::parse(None), Ok(Coding::Identity));
        assert_eq!(Coding::parse(Some(b" GZip ")), Ok(Coding::Gzip));
        assert_eq!(Coding::parse(Some(b"x-gzip")), Ok(Coding::Gzip));
        assert_eq!(Coding::parse(Some(b"deflate")), Ok(Coding::Deflate));
        assert!(matches!(
            Coding::parse(Some(b"br")),
            Err(DecodeError::Unsupported(_))
        ));
        assert!(matches!(
            Coding::parse(Some(b"gzip, gzip")),
            Err(DecodeError::Unsupported(_))
        ));
    }

    #[test]
    fn gzip_and_deflate_decode_and_a_bomb_stops_at_the_limit() {
        let body = br#"{"a":1}"#;
        assert_eq!(
            decode(Coding::Gzip, &gzip(body), 100),
            Ok(Some(body.to_vec()))
        );
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(body).unwrap();
        assert_eq!(
            decode(Coding::Deflate, &z.finish().unwrap(), 100),
            Ok(Some(body.to_vec()))
        );
        let bomb = gzip(&vec![b' '; 10 * 1024 * 1024]);
        assert!(bomb.len() < 64 * 1024, "{}", bomb.len());
        assert_eq!(
            decode(Coding::Gzip, &bomb, 64 * 1024),
            Err(DecodeError::TooLarge)
        );
        assert_eq!(
            decode(Coding::Gzip, &gzip(&[b'x'; 100]), 100)
                .unwrap()
                .unwrap()
                .len(),
            100
        );
        assert_eq!(
            decode(Coding::Gzip, b"{\"not\": \"gzip\"}", 100),
            Err(DecodeError::Corrupt("gzip"))
        );
        assert_eq!(decode(Coding::Gzip, b"", 100), Ok(None));
    }
}
