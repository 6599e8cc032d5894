//! What every target does with an input, written once: the `check_fuzz_input` of the parser's
//! property tests judges it (their `checks` module, which `make test` runs on the seeds too),
//! and a problem it reports is a crash for libFuzzer.

/// The target over the `checks` module in the file `$checks` (a path from this folder). With
/// `quiet_panics`, it first installs the hook of `quiet_panics.rs`, for a parser that catches
/// a panic on purpose.
macro_rules! check_each_input {
    ($checks:literal $(, $quiet_panics:ident)?) => {
        #[allow(dead_code)]
        #[path = $checks]
        mod checks;

        $(
            #[path = "quiet_panics.rs"]
            mod $quiet_panics;
        )?

        libfuzzer_sys::fuzz_target!($(init: $quiet_panics::install(),)? |data: &[u8]| {
            if let Err(problem) = checks::check_fuzz_input(data) {
                panic!("{problem}");
            }
        });
    };
}
