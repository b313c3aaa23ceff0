//! The streaming hive suite reader on arbitrary bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use release_warden::hive::{read_suite, HiveCase, SuiteVisitor};

struct Count(usize);

impl SuiteVisitor for Count {
    fn suite_name(&mut self, _: &str) {}
    fn case(&mut self, _: HiveCase<'_>) {
        self.0 += 1;
    }
    fn test_details_log(&mut self, _: &str) {}
}

fuzz_target!(|data: &[u8]| {
    let _ = read_suite(data, &mut Count(0));
});
