// Source: npm reactstrap@9.2.3, file src/ButtonDropdown.js; licence MIT (see LICENSES/reactstrap.txt)
import React from 'react';
import PropTypes from 'prop-types';
import Dropdown from './Dropdown';

const propTypes = {
  children: PropTypes.node,
};

function ButtonDropdown(props) {
  return <Dropdown group {...props} />;
}

ButtonDropdown.propTypes = propTypes;

export default ButtonDropdown;
