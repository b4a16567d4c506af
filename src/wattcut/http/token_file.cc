#include "wattcut/http/token_file.h"

#include <fstream>
#include <string>

namespace wattcut::http {

Result<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{"cannot read token file " + path};
  std::string line;
  std::getline(in, line);
  size_t begin = line.find_first_not_of(" \t\r\n");
  size_t end = line.find_last_not_of(" \t\r\n");
  if (begin == std::string::npos) return Error{"token file " + path + " holds no token"};
  return line.substr(begin, end - begin + 1);
}

}  // namespace wattcut::http
