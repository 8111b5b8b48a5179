#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kube/rest_client.h"

namespace ipu::kube {

// Parses a list reply (`{"items":[...]}`), leaving out the named fields of every item as the parser meets
// them: what a cache would drop anyway is never built. A page of 500 pods is mostly their specs and
// managedFields; left out here, its parse allocates a fraction of the tree (client-go decodes whole objects
// and transforms them after; this is the same result without the peak). `itemFields` names a member of an
// item ("spec") or a member of one of the item's objects ("metadata.managedFields"). Returns a discarded
// value (is_discarded()) when the body is not JSON.
Json parseListSkipping(const std::string& body, const std::vector<std::string>& itemFields);

// The same for one watch event (`{"type":...,"object":{...}}`): the named fields of its object left out.
Json parseWatchEventSkipping(std::string_view line, const std::vector<std::string>& objectFields);

// A list reply's continue token read from its metadata alone, the parse stopped where the metadata ends: the
// API server writes it before the items, so the next page can be asked for before this one is parsed. ""
// when the metadata has none (the last page); nullopt when the items come first or the text is not a JSON
// object (then the whole parse tells).
std::optional<std::string> continueTokenAhead(std::string_view body);

}  // namespace ipu::kube
