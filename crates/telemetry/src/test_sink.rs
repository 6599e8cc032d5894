//! Where the log layer's tests have their lines written, to read them back.

use std::sync::{Arc, Mutex};

/// A `MakeWriter` for a test's log layer (`.with_writer(sink.clone())`): every clone writes
/// into the same buffer.
#[derive(Clone, Default)]
pub(crate) struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Sink {
    type Writer = Sink;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Sink {
    /// The lines written so far, as written.
    pub(crate) fn lines(&self) -> Vec<String> {
        let written = self.0.lock().unwrap().clone();
        String::from_utf8(written)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}
