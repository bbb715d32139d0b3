//! `cat --skip N`, `--limit N` (over all the files, in order), `--with-id`
//! (file and id before each line) and a `--features` name no record has
//! (a note; an error with `--strict`), by `cat` and `get` alike.

use crate::support::cli::run;

const A: &str = "testdata/ref/small.tfrecord";
const B: &str = "testdata/bad/base5.tfrecord";

fn lines(args: &[&str]) -> Vec<String> {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out.lines().map(str::to_owned).collect()
}

#[test]
fn skip_and_limit_run_over_all_the_files() {
    let all: Vec<String> = lines(&["cat", A, B]);
    assert_eq!(all.len(), 15);
    assert_eq!(
        lines(&["cat", "--skip", "8", "--limit", "4", A, B]),
        all[8..12]
    );
    assert_eq!(lines(&["cat", "--skip", "14", A, B]), all[14..]);
    assert_eq!(lines(&["cat", "--skip", "20", A, B]), Vec::<String>::new());
    assert_eq!(lines(&["cat", "--limit", "0", A, B]), Vec::<String>::new());
    assert_eq!(lines(&["cat", "--limit", "3", A, B]), all[..3]);
}

#[test]
fn with_id_starts_each_line_with_file_and_id() {
    let all = lines(&["cat", A, B]);
    let with = lines(&["cat", "--with-id", "--skip", "9", "--limit", "2", A, B]);
    assert_eq!(
        with,
        [
            format!("{A}\t9\t{}", all[9]),
            format!("{B}\t0\t{}", all[10])
        ]
    );
}

#[test]
fn a_feature_no_record_has_is_said_once() {
    let (code, out, err) = run(&["cat", "--features", "label,nope", A, B]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 15);
    assert_eq!(
        err,
        "note: no record printed has a feature named \"nope\"\n"
    );
    let (code, _, err) = run(&["cat", "--strict", "--features", "nope", A]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "error[usage_error]: no record printed has a feature named \"nope\"\n"
    );
    let (code, _, err) = run(&["cat", "--features", "label", A]);
    assert_eq!((code, err.as_str()), (0, ""));
}

#[test]
fn get_says_a_feature_no_record_has_as_cat_does() {
    // `get --features image_clas` (a typo) once printed `{"features":{}}`
    // with exit 0 and no word, even with --strict.
    let (code, out, err) = run(&["get", "--features", "label,labl", A, "0", "3"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 2);
    assert_eq!(
        err,
        "note: no record printed has a feature named \"labl\"\n"
    );
    let (code, out, err) = run(&["get", "--strict", "--features", "labl", A, "1"]);
    assert_eq!(code, 1);
    assert_eq!(out, "{\"features\":{}}\n");
    assert_eq!(
        err,
        "error[usage_error]: no record printed has a feature named \"labl\"\n"
    );
    // A name a record printed has: nothing said.
    let (code, _, err) = run(&["get", "--strict", "--features", "label", A, "2"]);
    assert_eq!((code, err.as_str()), (0, ""));
}
