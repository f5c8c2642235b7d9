// The type of the blob at `url`, read without its bytes: the content type a fetch of
// it answers with ('' once the page revoked it).
function(url) {
  return fetch(url).then((r) => r.headers.get("content-type") || "", () => "");
}
