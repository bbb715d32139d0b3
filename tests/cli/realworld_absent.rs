//! A clone without `../shared/` (issue 37, point 17): every CLI test that
//! reads the real files passes without them, saying so in one line.

use crate::support::realworld::rerun_without_real_files;

#[test]
fn the_tests_of_the_real_files_pass_without_them_and_say_so() {
    rerun_without_real_files(&[
        "builtin_schema::the_real_elwc_files_print_as_elwc",
        "builtin_schema::the_real_event_file_prints_as_events",
        "builtin_schema::detection_names_only_the_event_and_elwc_real_files",
        "dump_unknown::the_real_event_file_dumps_with_its_guesses",
        "inspect_summary::the_summary_of_the_real_files_adds_up",
        "mixed_shards::the_real_files_as_one_dataset",
        "payload_notes::no_junk_names_note_on_the_real_files_under_their_own_payload",
        "schema_columns::waymo_scenario_columns_are_the_printers_values",
        "threaded_verify::real_files_and_hostile_files_verify_the_same_on_every_thread_count",
    ]);
}
