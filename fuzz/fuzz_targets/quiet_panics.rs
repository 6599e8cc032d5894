//! libfuzzer-sys makes every panic abort the process, even one the code under test catches
//! on purpose: `auth_service::birth_date` catches dateparser's panic on a zone offset of a
//! day or more (chrono's `FixedOffset::east`). This hook, installed over libfuzzer-sys's,
//! lets such a panic unwind silently to that `catch_unwind`; every other panic still goes
//! to libfuzzer-sys's hook (print, abort), and a chrono panic that nothing catches reaches
//! libfuzzer-sys's `catch_unwind` around the target, which aborts too: the fuzzer reports
//! both.

pub fn install() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let from_chrono_offset = info
            .location()
            .is_some_and(|l| l.file().contains("chrono") && l.file().ends_with("fixed.rs"));
        if !from_chrono_offset {
            default(info);
        }
    }));
}
