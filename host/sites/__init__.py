"""Sites: the site of a URL (scheme + registrable domain), the one definition Trimtab
uses wherever it asks "is this the same site?": the envelope's sites per task, the
pipeline's frames of another site, the tools' facts about an element's frame.

May import nothing of the host: it is the floor every other package may stand on.
"""

from ._site import Site, SiteError, parse_site, site_note, site_of

__all__ = ["Site", "SiteError", "parse_site", "site_note", "site_of"]
